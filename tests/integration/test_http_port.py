"""The HTTP port (`http.listener`) of a real broker process, checked against what real clients did."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from wirebroker.network.ports import free_port

TOPIC, GROUP = "orders", "order-readers"


@pytest.fixture
def http_broker(broker_factory):
    url = f"http://127.0.0.1:{free_port()}"
    process = broker_factory(**{"http.listener": url, "num.partitions": "2", "offsets.topic.num.partitions": "1",
                                "offsets.topic.replication.factor": "1"})
    process.http_url = url
    return process


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.headers["Content-Type"] == "application/json"
        return json.loads(response.read())


def test_state_shows_the_topics_offsets_producers_and_group_the_clients_made(http_broker):
    from kafka import KafkaConsumer, KafkaProducer

    producer = KafkaProducer(bootstrap_servers=http_broker.bootstrap, enable_idempotence=True, acks="all")
    for i in range(5):
        producer.send(TOPIC, value=b"v%d" % i, partition=i % 2)
    producer.flush()
    producer.close()
    consumer = KafkaConsumer(TOPIC, bootstrap_servers=http_broker.bootstrap, group_id=GROUP, client_id="reader-1",
                             auto_offset_reset="earliest")
    try:
        deadline = time.monotonic() + 30
        while not consumer.assignment() and time.monotonic() < deadline:
            consumer.poll(timeout_ms=200)
        state = get_json(http_broker.http_url + "/state")
    finally:
        consumer.close()

    topic = next(t for t in state["topics"] if t["name"] == TOPIC)
    offsets = [(p["partition"], p["log_start_offset"], p["high_watermark"], p["log_end_offset"])
               for p in topic["partitions"]]
    assert offsets == [(0, 0, 3, 3), (1, 0, 2, 2)]
    producer_ids = {p["partition"]: [s["producer_id"] for s in p["producers"]] for p in topic["partitions"]}
    assert producer_ids[0] == producer_ids[1] and len(producer_ids[0]) == 1  # one idempotent producer, both
    assert topic["partitions"][0]["producers"][0]["last_sequence"] == 2
    group = next(g for g in state["groups"] if g["group_id"] == GROUP)
    assert (group["state"], group["protocol_type"]) == ("Stable", "consumer")
    [member] = group["members"]
    assert member["client_id"] == "reader-1"
    assert member["assignment"] == {TOPIC: [0, 1]}
    assert state["listeners"] == [f"PLAINTEXT://127.0.0.1:{http_broker.port}"]
