"""wirebroker's log as a PySpark data source (Spark 4's Python Data Source API): batch and streaming reads.

    from wirebroker.spark import WirebrokerDataSource
    spark.dataSource.register(WirebrokerDataSource)
    df = (spark.read.format("wirebroker").option("path", "/var/lib/wirebroker/data")
          .option("subscribe", "orders").load())

It reads the segment files of a log dir directly (options.py lists the options, log_view.py what is read), with no
broker running: each Spark task opens the files of its topic partition (or of a range of its segments), so the path
must be readable where the executors run. Rows have the Kafka source's columns and types. There is no writer: writes
go through a broker (Spark's Kafka sink), so that replication, idempotence and ordering hold.

A stream (spark.readStream.format("wirebroker")) follows the high watermark in the checkpoint file; its offsets are
the Kafka source's, {"topic": {"partition": next offset}}; partitions that appear later are read from their start.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows
from pyspark.sql.types import StructType

from wirebroker.log.files import TopicPartition
from wirebroker.spark.log_view import LogDirectories, StoredRecord
from wirebroker.spark.options import (
    OffsetRange,
    SourceOptions,
    includes_headers,
    rate_limit,
    schema_for,
)

ROWS_PER_ARROW_BATCH = 8192  # rows handed to Spark at a time: big enough to amortise Arrow's per-batch cost
_EPOCH_MICROS_PER_MS = 1000


class WirebrokerDataSource(DataSource):
    """`format("wirebroker")`: reads topic partitions from a wirebroker (or Apache Kafka) log dir."""

    @classmethod
    def name(cls) -> str:
        return "wirebroker"

    def schema(self) -> str:
        # Spark asks for it before it knows whether the read is a batch or a stream: only includeHeaders matters.
        return schema_for(includes_headers(self.options))

    def reader(self, schema: StructType) -> DataSourceReader:
        return WirebrokerBatchReader(SourceOptions(self.options, streaming=False), schema)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return WirebrokerStreamReader(SourceOptions(self.options, streaming=True), schema)


class OffsetRangePartition(InputPartition):
    def __init__(self, offset_range: OffsetRange) -> None:
        super().__init__(offset_range)
        self.range = offset_range


class _RangeReader:
    """What the batch and the stream reader share: reading one offset range on an executor."""

    def __init__(self, options: SourceOptions, schema: StructType) -> None:
        self.options = options
        self.arrow_schema = to_arrow_schema(schema, timezone="UTC")

    def read(self, partition: OffsetRangePartition) -> Iterator[pa.RecordBatch]:
        piece = partition.range
        log = LogDirectories(self.options.paths).partition(TopicPartition(piece.topic, piece.partition))
        start, end = self.options.readable(piece, log)
        records = log.read(start, end, self.options.isolation_level)
        while chunk := list(islice(records, ROWS_PER_ARROW_BATCH)):
            yield self._arrow_batch(chunk, piece)

    def _arrow_batch(self, chunk: list[StoredRecord], piece: OffsetRange) -> pa.RecordBatch:
        rows = len(chunk)
        columns = [
            [stored.record.key for stored in chunk],
            [stored.record.value for stored in chunk],
            [piece.topic] * rows,
            [piece.partition] * rows,
            [stored.record.offset for stored in chunk],
            [stored.record.timestamp * _EPOCH_MICROS_PER_MS for stored in chunk],
            [int(stored.timestamp_type) for stored in chunk],
        ]
        if self.options.include_headers:
            # As the Kafka source: a record without headers has a null headers column, not an empty array.
            columns.append([[{"key": key, "value": value} for key, value in stored.record.headers] or None
                            for stored in chunk])
        arrays = [pa.array(column, type=field.type) for column, field in zip(columns, self.arrow_schema)]
        return pa.RecordBatch.from_arrays(arrays, schema=self.arrow_schema)


class WirebrokerBatchReader(_RangeReader, DataSourceReader):
    def partitions(self) -> list[OffsetRangePartition]:
        return [OffsetRangePartition(piece) for piece in self.options.batch_ranges()]


class WirebrokerStreamReader(_RangeReader, DataSourceStreamReader):
    def initialOffset(self) -> dict:
        log_dirs = self.options.log_dirs()
        return _as_offsets({tp: self.options.resolve(self.options.starting, log_dirs.partition(tp), tp, True)
                            for tp in self.options.topic_partitions(log_dirs)})

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        log_dirs = self.options.log_dirs()
        begin = _from_offsets(start)
        latest = {}
        for tp in self.options.topic_partitions(log_dirs):
            log = log_dirs.partition(tp)
            latest[tp] = log.latest_offset(self.options.isolation_level)
            begin.setdefault(tp, log.log_start_offset)  # a new partition is read from its start, as Kafka's source
        if isinstance(limit, ReadMaxRows):
            latest = rate_limit(begin, latest, limit.max_rows)
        return _as_offsets(latest)

    def getDefaultReadLimit(self) -> ReadLimit:
        limit = self.options.max_offsets_per_trigger
        return ReadAllAvailable() if limit is None else ReadMaxRows(limit)

    def partitions(self, start: dict, end: dict) -> list[OffsetRangePartition]:
        log_dirs = self.options.log_dirs()
        begin = _from_offsets(start)
        ranges = []
        for tp, until in _from_offsets(end).items():
            since = begin[tp] if tp in begin else log_dirs.partition(tp).log_start_offset
            ranges.append(OffsetRange(tp.topic, tp.partition, since, until))
        return [OffsetRangePartition(piece) for piece in self.options.split(ranges, log_dirs)]

    def commit(self, end: dict) -> None:
        """Nothing to do: the files are only read, and the offsets live in Spark's checkpoint."""


def _as_offsets(offsets: dict[TopicPartition, int]) -> dict:
    result: dict[str, dict[str, int]] = {}
    for tp, offset in sorted(offsets.items()):
        result.setdefault(tp.topic, {})[str(tp.partition)] = offset
    return result


def _from_offsets(offsets: dict) -> dict[TopicPartition, int]:
    return {TopicPartition(topic, int(p)): int(offset) for topic, by_partition in offsets.items()
            for p, offset in by_partition.items()}
