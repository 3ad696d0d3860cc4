"""The Kafka source's options (Spark's KafkaSourceProvider), read for the wirebroker data source, and the offset
ranges they select in a log directory. Nothing here imports pyspark, so the rules are tested without Spark.

Options, with the Kafka source's names and meanings:
  path                           the log dir (several: comma-separated, as log.dirs), instead of kafka.bootstrap.servers
  subscribe | subscribePattern | assign
                                 exactly one: topics "a,b"; a regex matched against whole topic names; or the JSON
                                 {"topic": [0, 1]}
  startingOffsets                "earliest" | "latest" | JSON {"topic": {"0": 23, "1": -2}} (-2 earliest, -1 latest);
                                 default earliest for a batch read, latest for a stream
  endingOffsets                  "latest" | JSON (-1 latest); batch reads only; default latest
  startingTimestamp / endingTimestamp
                                 one timestamp (ms) for every partition: the first offset whose record has a timestamp
                                 at or after it (ListOffsets by time)
  startingOffsetsByTimestamp / endingOffsetsByTimestamp
                                 JSON {"topic": {"0": 1700000000000}}
                                 (precedence as the Kafka source: *Timestamp, then *OffsetsByTimestamp, then *Offsets)
  startingOffsetsByTimestampStrategy
                                 "error" (default: no offset at or after the timestamp fails the read) or "latest"
  includeHeaders                 "true" adds the headers column (default false)
  kafka.isolation.level          read_uncommitted (default, as Kafka's consumer) or read_committed
  failOnDataLoss                 "true" (default): offsets outside the log fail the read; "false" clamps them
  minPartitions                  split the largest ranges at segment boundaries until there are at least this many
  maxRecordsPerPartition         split ranges at segment boundaries until none holds more offsets than this
  maxOffsetsPerTrigger           streams: at most this many offsets per micro-batch, prorated over partitions
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import NamedTuple

from wirebroker.log.files import TopicPartition
from wirebroker.spark.log_view import (
    ISOLATION_LEVELS,
    READ_UNCOMMITTED,
    LogDirectories,
    OffsetOutOfRangeError,
    PartitionLog,
)

EARLIEST = -2  # Kafka's sentinels in startingOffsets/endingOffsets JSON
LATEST = -1

_KEY_COLUMNS = "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, " \
               "timestampType int"
HEADERS_COLUMN = "headers array<struct<key: string, value: binary>>"


class OffsetRange(NamedTuple):
    """Offsets [start, end) of one topic partition: the unit a Spark task reads."""

    topic: str
    partition: int
    start: int
    end: int


class OffsetSpec(NamedTuple):
    """Where a read starts or ends: "earliest", "latest", "offsets" or "timestamps" (per partition), "timestamp"."""

    kind: str
    per_partition: Mapping[TopicPartition, int] = {}
    timestamp: int = 0


class SourceOptions:
    """The options of one read, checked once on the driver."""

    def __init__(self, options: Mapping[str, str], streaming: bool) -> None:
        options = {key.lower(): value for key, value in options.items()}  # Spark's options ignore case
        if not options.get("path"):
            raise ValueError('option "path" (the log dir to read) is required')
        self.paths = [path.strip() for path in options["path"].split(",") if path.strip()]
        self.streaming = streaming
        self.include_headers = includes_headers(options)
        self.fail_on_data_loss = _bool(options, "failondataloss", True)
        self.isolation_level = options.get("kafka.isolation.level", READ_UNCOMMITTED)
        if self.isolation_level not in ISOLATION_LEVELS:
            raise ValueError(f"kafka.isolation.level must be one of {', '.join(ISOLATION_LEVELS)}, "
                             f"not {self.isolation_level!r}")
        self.min_partitions = int(options.get("minpartitions", "0"))
        self.max_records_per_partition = int(options["maxrecordsperpartition"]) \
            if "maxrecordsperpartition" in options else None
        self.max_offsets_per_trigger = int(options["maxoffsetspertrigger"]) if "maxoffsetspertrigger" in options \
            else None
        self.strategy_on_no_match = options.get("startingoffsetsbytimestampstrategy", "error").lower()
        self._subscription = _subscription(options)
        self.starting = _offset_spec(options, "starting", "latest" if streaming else "earliest")
        self.ending = _offset_spec(options, "ending", "latest")
        if not streaming and (self.starting.kind == "latest" or LATEST in self._offsets(self.starting)):
            raise ValueError("starting offset can't be latest for batch queries on Kafka")
        if self.ending.kind == "earliest" or EARLIEST in self._offsets(self.ending):
            raise ValueError("ending offset can't be earliest for batch queries on Kafka")
        if streaming and "endingoffsets" in options:
            raise ValueError("ending offset not valid in streaming queries")

    @staticmethod
    def _offsets(spec: OffsetSpec) -> list[int]:
        return list(spec.per_partition.values()) if spec.kind == "offsets" else []

    @property
    def schema(self) -> str:
        return schema_for(self.include_headers)

    def log_dirs(self) -> LogDirectories:
        return LogDirectories(self.paths)

    def topic_partitions(self, log_dirs: LogDirectories) -> list[TopicPartition]:
        kind, value = self._subscription
        present = log_dirs.topic_partitions()
        if kind == "assign":
            return sorted(value)
        if kind == "subscribe":
            return [tp for tp in present if tp.topic in value]
        return [tp for tp in present if value.fullmatch(tp.topic)]

    def resolve(self, spec: OffsetSpec, log: PartitionLog, tp: TopicPartition, is_start: bool) -> int:
        """The offset `spec` names in `log`, within [log start, latest] (or an error when failOnDataLoss)."""
        latest = log.latest_offset(self.isolation_level)
        if spec.kind == "earliest":
            return log.log_start_offset
        if spec.kind == "latest":
            return latest
        if spec.kind in ("timestamp", "timestamps"):
            timestamp = spec.timestamp if spec.kind == "timestamp" else _for_partition(spec, tp, is_start)
            found = log.offset_for_timestamp(timestamp, self.isolation_level)
            if found is None and is_start and self.strategy_on_no_match == "error":
                raise ValueError(f"No offset matched from request of topic-partition {tp} and timestamp {timestamp}"
                                 f" (startingOffsetsByTimestampStrategy is error)")
            return latest if found is None else found
        offset = _for_partition(spec, tp, is_start)
        if offset == EARLIEST:
            return log.log_start_offset
        if offset == LATEST:
            return latest
        if not log.log_start_offset <= offset <= latest:
            if self.fail_on_data_loss:
                raise OffsetOutOfRangeError(
                    f"offset {offset} of {tp} is outside [{log.log_start_offset}, {latest}] (set failOnDataLoss to "
                    f"false to read from the nearest offset that exists instead)")
            offset = min(max(offset, log.log_start_offset), latest)
        return offset

    def readable(self, piece: OffsetRange, log: PartitionLog) -> tuple[int, int]:
        """The offsets of a planned range to read now: all of them, or with failOnDataLoss false what retention (or
        a truncation) left of them, as Kafka's source skips lost offsets."""
        if self.fail_on_data_loss:
            return piece.start, piece.end
        start = max(piece.start, log.log_start_offset)
        return start, max(min(piece.end, log.high_watermark), start)

    def batch_ranges(self) -> list[OffsetRange]:
        log_dirs = self.log_dirs()
        ranges = []
        for tp in self.topic_partitions(log_dirs):
            log = log_dirs.partition(tp)
            start = self.resolve(self.starting, log, tp, True)
            end = self.resolve(self.ending, log, tp, False)
            if end < start:
                raise ValueError(f"ending offset {end} of {tp} is before its starting offset {start}")
            ranges.append(OffsetRange(tp.topic, tp.partition, start, end))
        return self.split(ranges, log_dirs)

    def split(self, ranges: list[OffsetRange], log_dirs: LogDirectories) -> list[OffsetRange]:
        return split_ranges(ranges, log_dirs, self.min_partitions, self.max_records_per_partition)


def schema_for(include_headers: bool) -> str:
    """The Kafka source's columns (DDL), with the headers column when includeHeaders is true."""
    return f"{_KEY_COLUMNS}, {HEADERS_COLUMN}" if include_headers else _KEY_COLUMNS


def includes_headers(options: Mapping[str, str]) -> bool:
    """includeHeaders, read before the rest of the options are checked (Spark asks for the schema first)."""
    return _bool({key.lower(): value for key, value in options.items()}, "includeheaders", False)


def split_ranges(ranges: list[OffsetRange], log_dirs: LogDirectories, min_partitions: int = 0,
                 max_records: int | None = None) -> list[OffsetRange]:
    """`ranges` without empty ones, the largest split at its middle segment boundary while there are fewer than
    `min_partitions` pieces or one holds more than `max_records` offsets (Kafka's minPartitions and
    maxRecordsPerPartition). Pieces end at segment boundaries, so a task never scans a segment's head to find its
    start; a piece within one segment is not split."""
    pieces = [r for r in ranges if r.end > r.start]
    splittable = list(pieces)
    while splittable:
        piece = max(splittable, key=lambda r: r.end - r.start)
        if len(pieces) >= min_partitions and (max_records is None or piece.end - piece.start <= max_records):
            break
        splittable.remove(piece)
        log = log_dirs.partition(TopicPartition(piece.topic, piece.partition))
        boundaries = log.segment_boundaries(piece.start, piece.end)
        if boundaries:
            middle = boundaries[len(boundaries) // 2]
            halves = [piece._replace(end=middle), piece._replace(start=middle)]
            pieces.remove(piece)
            pieces += halves
            splittable += halves
    return sorted(pieces)


def rate_limit(start: Mapping[TopicPartition, int], until: Mapping[TopicPartition, int],
               limit: int) -> dict[TopicPartition, int]:
    """At most `limit` offsets in all from `start`, prorated by what each partition has (Kafka source's rateLimit)."""
    sizes = {tp: end - start.get(tp, end) for tp, end in until.items() if end - start.get(tp, end) > 0}
    total = sum(sizes.values())
    if total < 1:
        return dict(until)
    limited = {}
    for tp, end in until.items():
        if tp not in sizes:
            limited[tp] = end
            continue
        prorate = limit * (sizes[tp] / total)
        step = int(prorate) if prorate >= 1 else (1 if prorate > 0 else 0)  # Kafka: ceil below 1, floor above
        limited[tp] = min(end, start[tp] + step)
    return limited


def _bool(options: Mapping[str, str], key: str, default: bool) -> bool:
    return options[key].strip().lower() == "true" if key in options else default


def _subscription(options: Mapping[str, str]) -> tuple[str, object]:
    chosen = [key for key in ("assign", "subscribe", "subscribepattern") if options.get(key)]
    if len(chosen) != 1:
        raise ValueError('exactly one of the options "assign", "subscribe" or "subscribePattern" must be given')
    kind, value = chosen[0], options[chosen[0]]
    if kind == "assign":
        parsed = _json_object(value, "assign")
        return kind, {TopicPartition(topic, int(p)) for topic, partitions in parsed.items() for p in partitions}
    if kind == "subscribe":
        return kind, {topic.strip() for topic in value.split(",") if topic.strip()}
    return kind, re.compile(value)


def _offset_spec(options: Mapping[str, str], prefix: str, default: str) -> OffsetSpec:
    if f"{prefix}timestamp" in options:
        return OffsetSpec("timestamp", timestamp=int(options[f"{prefix}timestamp"]))
    if f"{prefix}offsetsbytimestamp" in options:
        return OffsetSpec("timestamps", _per_partition(options[f"{prefix}offsetsbytimestamp"], prefix))
    value = options.get(f"{prefix}offsets", default).strip()
    if value.lower() in ("earliest", "latest"):
        return OffsetSpec(value.lower())
    return OffsetSpec("offsets", _per_partition(value, prefix))


def _per_partition(text: str, prefix: str) -> dict[TopicPartition, int]:
    parsed = _json_object(text, f"{prefix}Offsets")
    return {TopicPartition(topic, int(p)): int(v) for topic, offsets in parsed.items() for p, v in offsets.items()}


def _json_object(text: str, option: str) -> dict:
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"option {option} is neither a keyword nor JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise ValueError(f"option {option} must be a JSON object, as the Kafka source takes it")  # noqa: TRY004 (a bad option value)
    return parsed


def _for_partition(spec: OffsetSpec, tp: TopicPartition, is_start: bool) -> int:
    if tp not in spec.per_partition:
        which = "startingOffsets" if is_start else "endingOffsets"
        raise ValueError(f"{which} names specific offsets but not {tp}: as the Kafka source, every topic partition "
                         f"read must be given one")
    return spec.per_partition[tp]
