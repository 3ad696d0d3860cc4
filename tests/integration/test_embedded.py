"""`with wirebroker.Broker() as broker:` in both modes: real clients round-trip through it, keywords configure it,
an unknown key is refused before anything starts, and its directory and listener are gone after the block, also
after an exception. The test helpers (create_topic, produce, read, wait_for_group_stable) against real clients."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time

import pytest

import wirebroker
from wirebroker import embedded
from wirebroker.config import ConfigError
from wirebroker.protocol.errors import (
    InvalidConfigError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)

MODES = [pytest.param(False, id="thread"), pytest.param(True, id="process")]


def _confluent_round_trip(bootstrap: str, topic: str) -> list[tuple[bytes, bytes]]:
    from confluent_kafka import Consumer, Producer, TopicPartition

    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(topic, key=b"k1", value=b"from confluent-kafka")
    assert producer.flush(10) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "embedded", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    message = consumer.poll(10)
    consumer.close()
    assert message is not None and message.error() is None, message and message.error()
    return [(message.key(), message.value())]


def _kafka_python_round_trip(bootstrap: str, topic: str) -> list[tuple[bytes, bytes]]:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    producer = KafkaProducer(bootstrap_servers=bootstrap)
    producer.send(topic, key=b"k2", value=b"from kafka-python").get(timeout=10)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=10_000)
    consumer.assign([TopicPartition(topic, 0)])
    consumer.seek(TopicPartition(topic, 0), 0)
    message = next(iter(consumer))
    consumer.close()
    return [(message.key, message.value)]


def _accepts_connections(bootstrap: str) -> bool:
    host, port = bootstrap.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=1).close()
    except OSError:
        return False
    return True


@pytest.mark.parametrize("process", MODES)
def test_clients_round_trip_and_everything_is_gone_after_the_block(process):
    with wirebroker.Broker(process=process) as broker:
        assert broker.root.is_dir()
        assert _confluent_round_trip(broker.bootstrap_servers, "confluent") == [(b"k1", b"from confluent-kafka")]
        assert _kafka_python_round_trip(broker.bootstrap_servers, "kafka-python") == [(b"k2", b"from kafka-python")]
        assert broker.read("confluent") == [(0, b"k1", b"from confluent-kafka")]
    assert not broker.root.exists()
    assert not _accepts_connections(broker.bootstrap_servers)
    if process:
        assert broker.child.returncode == 0  # a clean shutdown


@pytest.mark.parametrize("process", MODES)
def test_keywords_are_server_properties(process):
    with wirebroker.Broker(process=process, num_partitions=3, log_segment_bytes=1024 * 1024) as broker:
        broker.produce("auto-created", [b"x"])
        from confluent_kafka.admin import AdminClient, ConfigResource

        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        assert len(admin.list_topics("auto-created", timeout=10).topics["auto-created"].partitions) == 3
        resource = ConfigResource(ConfigResource.Type.TOPIC, "auto-created")
        configs = admin.describe_configs([resource])[resource].result(10)
        assert configs["segment.bytes"].value == str(1024 * 1024)
    with (wirebroker.Broker(auto_create_topics_enable=False) as broker,
          pytest.raises(UnknownTopicOrPartitionError, match="produce to absent-0")):
        broker.produce("absent", [b"x"])


def test_an_unknown_key_is_refused_by_name_before_anything_starts():
    with pytest.raises(ConfigError, match=r"num_partition: unknown configuration key 'num.partition'; "
                                          r"did you mean num.partitions"):
        wirebroker.Broker(num_partition=3)


def test_a_bad_value_fails_the_start_and_leaves_nothing_behind():
    broker = wirebroker.Broker(num_partitions="many")
    with pytest.raises(ConfigError, match="num.partitions"):
        broker.start()
    assert not broker.root.exists()


@pytest.mark.parametrize("process", MODES)
def test_an_exception_in_the_block_still_cleans_up(process):
    with pytest.raises(RuntimeError, match="the test failed"), wirebroker.Broker(process=process) as broker:
        broker.produce("t", [b"x"])
        raise RuntimeError("the test failed")
    assert not broker.root.exists()
    assert not _accepts_connections(broker.bootstrap_servers)


def test_async_with_and_an_aiokafka_round_trip():
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    async def round_trip() -> tuple[bytes, wirebroker.Broker]:
        async with wirebroker.Broker() as broker:
            producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap_servers)
            await producer.start()
            await producer.send_and_wait("aio", b"from aiokafka")
            await producer.stop()
            consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap_servers, enable_auto_commit=False)
            await consumer.start()
            consumer.assign([TopicPartition("aio", 0)])
            consumer.seek(TopicPartition("aio", 0), 0)
            message = await asyncio.wait_for(consumer.getone(), 10)
            await consumer.stop()
            return message.value, broker

    value, broker = asyncio.run(round_trip())
    assert value == b"from aiokafka"
    assert not broker.root.exists()


def test_helpers_create_produce_and_read(monkeypatch):
    with wirebroker.Broker() as broker:
        broker.create_topic("compacted", partitions=2, cleanup_policy="compact")
        with pytest.raises(TopicAlreadyExistsError, match="create_topic\\('compacted'\\)"):
            broker.create_topic("compacted")
        with pytest.raises(InvalidConfigError):
            broker.create_topic("bad", retention_ms="soon")
        assert broker.produce("compacted", [("k1", "v1"), (b"k2", None), ("k1", b"v3")]) == [0, 1, 2]
        assert broker.produce("compacted", [("k", "on one")], partition=1) == [0]
        assert broker.read("compacted") == [(0, b"k1", b"v1"), (1, b"k2", None), (2, b"k1", b"v3")]
        assert broker.read("compacted", from_offset=2) == [(2, b"k1", b"v3")]
        assert broker.read("compacted", partition=1) == [(0, b"k", b"on one")]
        assert broker.produce("compacted", []) == []
        # Records a real client wrote, one batch each, read back the same through many fetches of at most 2 KiB.
        from confluent_kafka import Producer

        monkeypatch.setattr(embedded, "READ_MAX_BYTES", 2048)

        producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0})
        for i in range(50):
            producer.produce("many", value=f"value-{i}".encode() * 100)
        assert producer.flush(10) == 0
        assert [(offset, value) for offset, _, value in broker.read("many", from_offset=10)] == [
            (i, f"value-{i}".encode() * 100) for i in range(10, 50)]


def test_wait_for_group_stable():
    from confluent_kafka import Consumer

    with wirebroker.Broker() as broker:
        broker.create_topic("orders", partitions=2)
        with pytest.raises(TimeoutError, match="'checkout' was not Stable within 0.1 s \\(last state: no such group"):
            broker.wait_for_group_stable("checkout", timeout=0.1)
        consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "checkout"})
        consumer.subscribe(["orders"])
        done = threading.Event()
        polling = threading.Thread(target=lambda: [consumer.poll(0.05) for _ in iter(done.is_set, True)])
        polling.start()
        try:
            broker.wait_for_group_stable("checkout", timeout=20)
        finally:
            done.set()
            polling.join()
            consumer.close()


def test_the_start_up_benchmark_runs(tmp_path):
    from bench.embedded_startup import main

    assert main(["--starts", "3", "--process-starts", "1", "--out", str(tmp_path)]) == 0
    results = json.loads((tmp_path / "embedded-startup.json").read_text())
    assert len(results["thread"]) == 3 and len(results["process"]) == 1
    assert all(0 < run["start_ms"] < 30_000 and 0 < run["stop_ms"] < 30_000 for run in results["thread"])
    assert "| thread | 3 |" in (tmp_path / "embedded-startup.md").read_text()


def test_read_leaves_out_transaction_markers():
    from confluent_kafka import Consumer, Producer, TopicPartition

    with wirebroker.Broker() as broker:
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": "embedded-txn"})
        producer.init_transactions(10)
        producer.begin_transaction()
        producer.produce("payments", key=b"p1", value=b"paid")
        producer.produce("payments", key=b"p2", value=b"refunded")
        producer.commit_transaction(10)
        assert broker.read("payments") == [(0, b"p1", b"paid"), (1, b"p2", b"refunded")]
        # The commit returns once it is decided; the marker is written after (as in Kafka): wait for offset 2 to hold it.
        consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "watermarks"})
        deadline = time.monotonic() + 10
        while consumer.get_watermark_offsets(TopicPartition("payments", 0), 5)[1] < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        consumer.close()
        assert broker.produce("payments", [b"after the marker"]) == [3]  # the commit marker holds offset 2
        assert broker.read("payments", from_offset=2) == [(3, None, b"after the marker")]
        with pytest.raises(TypeError, match="takes a list of values"):
            broker.produce("payments", b"one value")
