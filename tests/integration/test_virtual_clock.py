"""The virtual clock (issue 15 item 5): a test advances the broker's time and what fell due happens at once, with
real clients and no sleeping through session or retention times."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import confluent_kafka
import kafka
import pytest

import wirebroker
from tests.integration.group_clients import KafkaPythonConsumer, wait_for
from wirebroker.network.broker_client import BrokerClient
from wirebroker.protocol.errors import OffsetOutOfRangeError
from wirebroker.protocol.messages.describe_producers import DescribeProducersRequest
from wirebroker.protocol.messages.fetch import FetchRequest

SESSION_TIMEOUT_MS = 30_000
# A member that joins, then dies without leaving its group (SIGKILL: no LeaveGroup).
DEAD_MEMBER = f"""
import sys, kafka
consumer = kafka.KafkaConsumer("t", bootstrap_servers=sys.argv[1], group_id="g",
                               session_timeout_ms={SESSION_TIMEOUT_MS}, heartbeat_interval_ms=1000)
while True:
    consumer.poll(200)
"""


def test_an_advance_expires_a_dead_members_session_and_the_group_rebalances_at_once():
    # The live member's 3 s session (group_clients.py) is below Kafka's 6 s group.min.session.timeout.ms.
    with wirebroker.Broker(virtual_clock=True, group_min_session_timeout_ms=1000) as broker:
        broker.create_topic("t", partitions=2)
        dead = subprocess.Popen([sys.executable, "-c", DEAD_MEMBER, broker.bootstrap_servers])
        try:
            broker.wait_for_group_stable("g", timeout=30)
        finally:
            dead.kill()
            dead.wait()
        live = KafkaPythonConsumer(broker.bootstrap_servers, "g", "t").start()
        try:
            time.sleep(1.5)
            assert live.assignment == set()  # the rebalance waits for the dead member, up to its 30 s session
            started = time.monotonic()
            broker.clock.advance(SESSION_TIMEOUT_MS)
            wait_for(lambda: live.assignment == {0, 1}, 10, "the live member to get both partitions")
            assert time.monotonic() - started < SESSION_TIMEOUT_MS / 1000 / 3
        finally:
            live.close()


def _long_poll(broker: wirebroker.Broker, max_wait_ms: int, done: list[float]) -> threading.Thread:
    """A Fetch on the empty partition t-0 that may wait `max_wait_ms` for a byte, on a thread; `done` gets the
    wall time it took."""
    def fetch() -> None:
        host, port = broker.bootstrap_servers.rsplit(":", 1)
        client = BrokerClient(host, int(port), client_id="long-poll", timeout_s=max_wait_ms / 1000 + 10)
        partition = FetchRequest.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1024)
        request = FetchRequest(max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1024,
                               topics=[FetchRequest.FetchTopic(topic="t", partitions=[partition])])
        started = time.monotonic()
        client.send(request, 12)
        done.append(time.monotonic() - started)
        client.close()

    thread = threading.Thread(target=fetch, daemon=True)
    thread.start()
    return thread


def test_an_advance_ends_a_fetch_waiting_in_purgatory():
    with wirebroker.Broker(virtual_clock=True) as broker:
        broker.create_topic("t")
        done: list[float] = []
        thread = _long_poll(broker, 60_000, done)
        time.sleep(0.5)
        assert done == []
        broker.clock.advance(60_000)
        thread.join(5)
        assert done and done[0] < 5


def test_an_advance_past_retention_ms_deletes_the_old_segments():
    with wirebroker.Broker(virtual_clock=True) as broker:
        broker.create_topic("t", retention_ms=60_000, internal_segment_bytes=200)
        for batch in range(4):
            broker.produce("t", [b"x" * 100 + str(batch).encode()])
        assert len(broker.read("t")) == 4
        broker.clock.advance(5 * 60_000)  # log.retention.check.interval.ms: the check runs, past retention.ms
        with pytest.raises(OffsetOutOfRangeError):
            broker.read("t")


def test_an_advance_past_transaction_timeout_ms_aborts_the_open_transaction():
    with wirebroker.Broker(virtual_clock=True) as broker:
        broker.create_topic("t")
        producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": "tx",
                                             "transaction.timeout.ms": 60_000})
        producer.init_transactions(10)
        producer.begin_transaction()
        producer.produce("t", b"never committed", partition=0)
        assert producer.flush(10) == 0
        # transaction.timeout.ms, plus the coordinator's 10 s check (transaction.abort.timed.out...interval.ms)
        broker.clock.advance(70_000)
        with pytest.raises(confluent_kafka.KafkaException, match="fenced"):
            producer.commit_transaction(10)  # the coordinator aborted it and bumped the producer's epoch
        consumer = confluent_kafka.Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "g",
                                             "isolation.level": "read_committed"})
        assert consumer.get_watermark_offsets(confluent_kafka.TopicPartition("t", 0), timeout=10) == (0, 2)
        consumer.close()  # the record and the coordinator's ABORT marker


def test_an_advance_past_producer_id_expiration_ms_forgets_the_idle_producer():
    with wirebroker.Broker(virtual_clock=True) as broker:
        broker.create_topic("t")
        producer = kafka.KafkaProducer(bootstrap_servers=broker.bootstrap_servers, enable_idempotence=True)
        producer.send("t", b"x", partition=0).get(timeout=10)
        producer.close()
        host, port = broker.bootstrap_servers.rsplit(":", 1)
        client = BrokerClient(host, int(port), client_id="describe-producers")
        request = DescribeProducersRequest(topics=[DescribeProducersRequest.TopicRequest(name="t",
                                                                                         partition_indexes=[0])])

        def producers() -> int:
            return len(client.send(request, 0).topics[0].partitions[0].active_producers)

        assert producers() == 1
        broker.clock.advance(24 * 3_600_000)  # Kafka's producer.id.expiration.ms: a day
        assert producers() == 0
        client.close()


def test_a_child_process_brokers_clock_advances_over_http():
    with wirebroker.Broker(process=True, virtual_clock=True) as broker:
        broker.create_topic("t")
        done: list[float] = []
        thread = _long_poll(broker, 60_000, done)
        time.sleep(0.5)
        assert broker.clock.advance(60_000) == 60_000
        thread.join(5)
        assert done and done[0] < 5


def test_the_system_clock_cannot_be_advanced():
    with wirebroker.Broker() as broker, pytest.raises(RuntimeError, match="virtual_clock=True"):
        broker.clock.advance(1)
