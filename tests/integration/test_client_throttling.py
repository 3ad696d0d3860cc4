"""Issue 14 item 5: a producer over its producer_byte_rate quota is throttled to it (throttle_time_ms in its
responses, its connection muted), while another producer on the same broker keeps its rate."""

from __future__ import annotations

import multiprocessing
import time

import pytest

from tests.integration.group_clients import create_topic
from tests.integration.raw_client import RawClient
from tests.integration.test_client_quotas import alter, alteration

confluent_kafka = pytest.importorskip("confluent_kafka")

QUOTA = 300_000  # bytes/s for the throttled client id
# Kafka's rate spans 11 one-second samples, and a fresh one at least 10: a client starting cold may send ~10 s of
# quota at once, then trickles until that sample expires, then bursts again: a sawtooth with an 11 s period whose
# average is the quota. So the throttled rate is measured over one whole period after the first burst. (Apache Kafka
# 4.3.1 with this producer and quota: 3.31 MB acknowledged after 1 s, 3.71 MB at 12 s, 6.54 MB at 13 s; wirebroker:
# 3.28, 3.74, 6.63 MB.)
WARM_UP_S, PERIOD_S = 2.0, 11.0
VALUE = b"x" * 1000


def produce_for(bootstrap: str, client_id: str, seconds: float, measure_from: float = 0.0) -> float:
    """Produce as fast as the broker lets us for `seconds`; bytes acknowledged per second after `measure_from`."""
    acked = [0]

    def delivered(err, msg):
        if err is None:
            acked[0] += len(msg.value())

    producer = confluent_kafka.Producer({
        "bootstrap.servers": bootstrap, "client.id": client_id, "linger.ms": 5, "acks": 1, "log_level": 0,
        "queue.buffering.max.kbytes": 512, "batch.size": 65536,
    })
    start = time.monotonic()
    acked_before = None
    while time.monotonic() - start < seconds:
        if acked_before is None and time.monotonic() - start >= measure_from:
            acked_before = acked[0]
        try:
            producer.produce("throttled", VALUE, on_delivery=delivered)
        except BufferError:
            producer.poll(0.005)
        producer.poll(0)
    rate = (acked[0] - acked_before) / (seconds - measure_from)
    producer.flush(30)
    return rate


def test_a_producer_over_its_quota_slows_to_it_and_another_keeps_its_rate(broker):
    create_topic(broker.bootstrap, "throttled", 1)
    # The unthrottled producer runs in a process of its own, alone and then beside the throttled one: as a thread
    # beside it, it shared this process's GIL with the throttled producer's loop and made 0.40-0.45 of its rate
    # alone in about one run of three, whatever the broker did.
    spawn = multiprocessing.get_context("spawn")
    with spawn.Pool(1) as pool:
        baseline = pool.apply(produce_for, (broker.bootstrap, "free", 4.0))
        with RawClient(broker.bootstrap) as client:
            assert alter(client, alteration({"client-id": "slow"}, producer_byte_rate=float(QUOTA))) == [(0, None)]
        free = pool.apply_async(produce_for, (broker.bootstrap, "free", PERIOD_S))
        slow = produce_for(broker.bootstrap, "slow", WARM_UP_S + PERIOD_S, measure_from=WARM_UP_S)
        free_rate = free.get(timeout=60)
    # Requests carry a little more than the values (record and batch headers): the values' rate sits just under.
    assert 0.90 * QUOTA <= slow <= 1.10 * QUOTA, (slow, QUOTA)
    # The other client is not held to the quota, nor stalled by the throttled one's muting: far above the quota, and
    # a good share of its rate alone. Not more: on two cores the broker, both producers and CI's other work share
    # the CPU (0.43 of the baseline seen in CI, 0.70 on a quiet machine), while a broker that throttled every client
    # or slept on the network thread for the throttled one makes it a small fraction.
    assert free_rate >= max(20 * QUOTA, 0.25 * baseline), (free_rate, baseline)


def test_throttle_time_ms_is_answered_and_the_connection_muted_that_long(broker):
    """500 kB of quota per 10 s window: a 600 kB request is 20 % over, 2 s of throttle (Kafka's formula)."""
    from tests.integration.test_data_path_errors import a_batch, fetch, produce
    from tests.integration.test_data_path_errors import create_topic as create_raw_topic

    batch = a_batch(count=60, value_size=10_000)
    with RawClient(broker.bootstrap, client_id="raw-slow") as client:
        assert alter(client, alteration({"client-id": "raw-slow"}, producer_byte_rate=50_000.0),
                     alteration({"client-id": "raw-reader"}, consumer_byte_rate=50_000.0)) == [(0, None)] * 2
        create_raw_topic(client, "raw-throttled")
        assert client.request(0, 9, acks=1, timeout_ms=5000, topic_data=[]).throttle_time_ms == 0
        response = client.request(0, 9, acks=1, timeout_ms=5000, topic_data=[_topic_data("raw-throttled", batch)])
        assert 1800 <= response.throttle_time_ms <= 2300, response.throttle_time_ms
        started = time.monotonic()
        client.request(3, 12, topics=[])  # Metadata: read only once the throttle is over
        assert time.monotonic() - started >= response.throttle_time_ms / 1000 - 0.1
        assert produce(client, "raw-throttled", a_batch()).error_code == 0
    with RawClient(broker.bootstrap, client_id="raw-reader") as client:
        from wirebroker.protocol.messages.fetch import FetchRequest as F

        response = client.request(1, 12, replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=10_000_000,
                                  topics=[F.FetchTopic(topic="raw-throttled", partitions=[
                                      F.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=10_000_000)])])
        assert response.throttle_time_ms > 1000 and response.responses == []  # over quota: answered empty
        started = time.monotonic()  # the small batch after the big one fits the quota
        assert fetch(client, "raw-throttled", 60).error_code == 0
        assert time.monotonic() - started >= response.throttle_time_ms / 1000 - 0.1


def _topic_data(topic: str, batch: bytes):
    from wirebroker.protocol.messages.produce import ProduceRequest as P

    return [P.TopicProduceData(name=topic, partition_data=[P.PartitionProduceData(index=0, records=batch)])][0]


def test_request_percentage_throttles_by_handler_time_at_most_one_window(broker):
    """request_percentage=0.5: 5 ms of handler time per second, 50 ms over a fresh 10 s span; Metadata requests
    soon exceed it, and a request quota throttles for at most one window (1 s), as Kafka bounds it."""
    with RawClient(broker.bootstrap, client_id="busy") as client:
        assert alter(client, alteration({"client-id": "busy"}, request_percentage=0.5)) == [(0, None)]
        throttles = []
        deadline = time.monotonic() + 20
        while not any(throttles) and time.monotonic() < deadline:
            throttles.append(client.request(3, 12, topics=None).throttle_time_ms)
        assert any(throttles), len(throttles)
        assert 0 < max(throttles) <= 1000
    with RawClient(broker.bootstrap, client_id="idle") as other:  # another client id: no quota
        assert other.request(3, 12, topics=None).throttle_time_ms == 0
