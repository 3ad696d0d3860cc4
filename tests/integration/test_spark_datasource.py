"""wirebroker.spark against Spark's own Kafka connector, on a real broker and a real Spark (pyspark 4.2, local[2]):

  * the data source over the broker's log dir returns exactly the connector's rows through the broker, every column,
    for every codec, null keys and values, headers, and an offset range;
  * read_committed leaves out aborted transactions as the connector does;
  * a log dir that Apache Kafka 4.3.1 wrote reads as Kafka's broker serves it;
  * a stream over the log dir picks up records produced after it starts, with none lost or repeated across a broker
    restart.
One SparkSession serves the module (Spark takes ~15 s to start on 2 shared cores). WIREBROKER_RELIABILITY=full
compares 20,000 records per codec (several segments) and streams 10,000.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from compat_tests.reference_kafka import ReferenceKafka
from compat_tests.spark_session import SparkUnavailable, start_session
from tests.integration.broker_process import BrokerProcess
from wirebroker.log.files import TopicPartition
from wirebroker.spark.log_view import LogDirectories, OffsetOutOfRangeError

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
# The data source sees what the high watermark checkpoint says: checkpoint often, from the start.
FRESH_CHECKPOINTS = {"replica.high.watermark.checkpoint.interval.ms": "200", "log.initial.task.delay.ms": "0"}
FULL = os.environ.get("WIREBROKER_RELIABILITY") == "full"
RECORDS_PER_CODEC = 20_000 if FULL else 60
SEGMENT_BYTES = 16 * 1024 if FULL else 1024  # several segments per codec topic at either size
STREAMED = 5_000 if FULL else 30  # records produced on each side of the broker restart


def module_session(request):
    """A module's one SparkSession; pyspark missing (and not installable) fails the test saying what to install."""
    try:
        session = start_session(f"wirebroker-{request.module.__name__}")
    except SparkUnavailable as exc:
        pytest.fail(str(exc), pytrace=False)
    yield session
    session.stop()


@pytest.fixture(scope="module")
def spark(request):
    yield from module_session(request)


@pytest.fixture(scope="module")
def module_broker(tmp_path_factory):
    process = BrokerProcess(tmp_path_factory.mktemp("spark") / "data", FRESH_CHECKPOINTS).start()
    yield process
    try:
        process.stop()
    finally:
        process.kill()


def record(i: int) -> dict:
    """Keys and values null now and then, headers (one with a null value) on some records."""
    return {"key": None if i % 7 == 0 else f"key-{i}".encode(),
            "value": None if i % 11 == 0 else f"value-{i}-".encode() * (1 + i % 5),
            "headers": [("h", f"{i}".encode()), ("empty", None)] if i % 3 == 0 else []}


def produce(bootstrap: str, topic: str, records: list[dict], codec: str = "none", batch_bytes: int = 1_000_000) -> None:
    """librdkafka: it sends null header values (kafka-python refuses them). batch_bytes: librdkafka's batch.size, to
    get many batches (a batch never spans segments, and the broker refuses one larger than a segment)."""
    failures = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, "compression.type": codec,
                         "batch.size": batch_bytes})
    for r in records:
        producer.produce(topic, key=r["key"], value=r["value"], headers=r["headers"], partition=0,
                         on_delivery=lambda error, _: error and failures.append(error))
    assert producer.flush(30) == 0
    assert failures == []


def wait_for_checkpoint(data_dir: Path, topic: str, end: int, timeout: float = 20) -> None:
    """Until the broker's high watermark checkpoint says `end` for partition 0 of `topic`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OffsetOutOfRangeError):  # the partition dir may not exist yet
            if LogDirectories([str(data_dir)]).partition(TopicPartition(topic, 0)).high_watermark >= end:
                return
        time.sleep(0.1)
    raise AssertionError(f"the high watermark checkpoint of {topic}-0 did not reach {end} in {timeout}s")


def kafka_rows(spark, bootstrap: str, topic: str, **options: str) -> list:
    reader = spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
    for key, value in options.items():
        reader = reader.option(key, value)
    return sorted(reader.load().collect(), key=lambda row: (row.partition, row.offset))


def datasource_rows(spark, data_dir: Path, topic: str, **options: str) -> list:
    reader = spark.read.format("wirebroker").option("path", str(data_dir)).option("subscribe", topic)
    for key, value in options.items():
        reader = reader.option(key, value)
    return sorted(reader.load().collect(), key=lambda row: (row.partition, row.offset))


@pytest.fixture(scope="module")
def codec_topics(module_broker):
    """A topic per codec, produced once, in small segments (several tasks read one partition)."""
    admin = AdminClient({"bootstrap.servers": module_broker.bootstrap})
    created = admin.create_topics([NewTopic(f"spark-compare-{codec}", 1, 1, config={"internal.segment.bytes": str(SEGMENT_BYTES)})
                                   for codec in CODECS])
    for future in created.values():
        future.result(30)
    for codec in CODECS:
        produce(module_broker.bootstrap, f"spark-compare-{codec}", [record(i) for i in range(RECORDS_PER_CODEC)],
                codec, batch_bytes=SEGMENT_BYTES // 8)
    for codec in CODECS:
        wait_for_checkpoint(module_broker.data_dir, f"spark-compare-{codec}", RECORDS_PER_CODEC)


@pytest.mark.parametrize("codec", CODECS)
def test_the_data_source_returns_the_kafka_connectors_rows(spark, module_broker, codec_topics, codec):
    topic = f"spark-compare-{codec}"
    ours = datasource_rows(spark, module_broker.data_dir, topic, includeHeaders="true")
    theirs = kafka_rows(spark, module_broker.bootstrap, topic, includeHeaders="true")
    assert len(theirs) == RECORDS_PER_CODEC
    assert ours == theirs
    assert ours[0].asDict().keys() == theirs[0].asDict().keys()
    assert any(row.key is None for row in ours) and any(row.value is None for row in ours)
    assert any(header.value is None for row in ours for header in row.headers)
    ranged = {"startingOffsets": f'{{"{topic}": {{"0": 7}}}}', "endingOffsets": f'{{"{topic}": {{"0": 42}}}}'}
    assert datasource_rows(spark, module_broker.data_dir, topic, **ranged) == \
        kafka_rows(spark, module_broker.bootstrap, topic, **ranged)
    assert len(datasource_rows(spark, module_broker.data_dir, topic, **ranged)) == 35
    assert len(LogDirectories([str(module_broker.data_dir)]).partition(TopicPartition(topic, 0)).base_offsets) >= 2
    split = datasource_rows(spark, module_broker.data_dir, topic, includeHeaders="true", minPartitions="3")
    assert split == theirs  # a task per segment range


def test_a_stream_follows_the_log_across_a_broker_restart(spark, module_broker, tmp_path):
    topic = "spark-stream"
    produce(module_broker.bootstrap, topic, [record(i) for i in range(20)])  # before the stream: not read
    wait_for_checkpoint(module_broker.data_dir, topic, 20)
    stream = (spark.readStream.format("wirebroker").option("path", str(module_broker.data_dir))
              .option("subscribe", topic).option("startingOffsets", "latest")
              .option("maxOffsetsPerTrigger", str(STREAMED // 2)).load())
    query = (stream.selectExpr("CAST(value AS STRING) AS value", "offset").writeStream.format("memory")
             .queryName("followed").option("checkpointLocation", str(tmp_path / "checkpoint"))
             .trigger(processingTime="500 milliseconds").start())
    try:
        wait_until(lambda: query.lastProgress is not None, "the stream's first micro-batch")
        produce(module_broker.bootstrap, topic,
                [{"key": None, "value": b"a%d" % i, "headers": []} for i in range(STREAMED)])
        wait_until(lambda: spark.sql("SELECT count(*) FROM followed").first()[0] >= STREAMED, "the first records")
        module_broker.restart()
        produce(module_broker.bootstrap, topic,
                [{"key": None, "value": b"b%d" % i, "headers": []} for i in range(STREAMED)])
        wait_until(lambda: spark.sql("SELECT count(*) FROM followed").first()[0] >= 2 * STREAMED, "the rest")
        time.sleep(1.5)  # a few more micro-batches: nothing may come twice
        rows = spark.sql("SELECT value, offset FROM followed ORDER BY offset").collect()
        batch_sizes = [progress["numInputRows"] for progress in query.recentProgress]
    finally:
        query.stop()
    assert [row.value for row in rows] == [f"a{i}" for i in range(STREAMED)] + [f"b{i}" for i in range(STREAMED)]
    assert [row.offset for row in rows] == list(range(20, 20 + 2 * STREAMED))
    assert 0 < max(batch_sizes) <= STREAMED // 2  # maxOffsetsPerTrigger


def wait_until(condition, what: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def produce_transactions(bootstrap: str, topic: str, leave_open: bool = False) -> Producer:
    """Ten records committed, ten aborted, ten committed (and ten more in a transaction left open)."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"spark-tests-{topic}", "linger.ms": 5})
    producer.init_transactions(30)
    for commit in (True, False, True, None) if leave_open else (True, False, True):
        producer.begin_transaction()
        for i in range(10):
            producer.produce(topic, key=b"k", value=b"%s-%d" % (b"aborted" if commit is False else b"committed", i),
                             partition=0)
        assert producer.flush(30) == 0  # sent before the abort: librdkafka purges what it still holds
        if commit is not None:
            (producer.commit_transaction if commit else producer.abort_transaction)(30)
    return producer


def test_read_committed_leaves_out_aborted_transactions_as_the_connector_does(spark, module_broker):
    topic = "spark-transactions"
    produce_transactions(module_broker.bootstrap, topic)
    produce(module_broker.bootstrap, topic, [{"key": b"k", "value": b"plain", "headers": []}])
    wait_for_checkpoint(module_broker.data_dir, topic, 34)  # 31 records and 3 markers
    committed = {"kafka.isolation.level": "read_committed"}
    ours = datasource_rows(spark, module_broker.data_dir, topic, **committed)
    assert ours == kafka_rows(spark, module_broker.bootstrap, topic, **committed)
    assert [row.value for row in ours] == [b"committed-%d" % i for i in range(10)] * 2 + [b"plain"]
    assert datasource_rows(spark, module_broker.data_dir, topic) == kafka_rows(spark, module_broker.bootstrap, topic)


def test_a_log_dir_written_by_apache_kafka_reads_as_kafkas_broker_serves_it(spark, tmp_path):
    with ReferenceKafka(tmp_path / "kafka") as kafka:
        for codec in ("gzip", "zstd"):
            produce(kafka.bootstrap, f"from-kafka-{codec}", [record(i) for i in range(40)], codec)
        served = {codec: kafka_rows(spark, kafka.bootstrap, f"from-kafka-{codec}", includeHeaders="true")
                  for codec in ("gzip", "zstd")}
        open_transaction = produce_transactions(kafka.bootstrap, "from-kafka-txn", leave_open=True)
        committed = {"kafka.isolation.level": "read_committed"}
        served_committed = kafka_rows(spark, kafka.bootstrap, "from-kafka-txn", **committed)
        served_uncommitted = kafka_rows(spark, kafka.bootstrap, "from-kafka-txn")
    del open_transaction  # Kafka stopped with it open: its snapshot and .txnindex tell the data source what to skip
    data_dir = tmp_path / "kafka" / "data"
    for codec, rows in served.items():
        assert len(rows) == 40
        assert datasource_rows(spark, data_dir, f"from-kafka-{codec}", includeHeaders="true") == rows
    assert [row.value for row in served_committed] == [b"committed-%d" % i for i in range(10)] * 2
    assert datasource_rows(spark, data_dir, "from-kafka-txn", **committed) == served_committed
    assert len(served_uncommitted) == 40
    assert datasource_rows(spark, data_dir, "from-kafka-txn") == served_uncommitted
