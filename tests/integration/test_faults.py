"""Fault injection (issue 15 item 5) against real clients: an injected error is retried, a delay is felt, a dropped
answer times out and is retried, a closed connection is reopened; and the HTTP port sets rules from curl."""

from __future__ import annotations

import json
import subprocess
import time

import confluent_kafka
import kafka
import pytest

import wirebroker
from wirebroker.protocol.errors import NotLeaderOrFollowerError


@pytest.fixture
def broker():
    with wirebroker.Broker() as broker:
        broker.create_topic("t", partitions=2)
        yield broker


def _confluent_producer(broker: wirebroker.Broker, **config) -> confluent_kafka.Producer:
    return confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers, "retry.backoff.ms": 20,
                                     "linger.ms": 0, **config})


def _deliver(producer: confluent_kafka.Producer, topic: str, value: bytes, partition: int = 0) -> None:
    errors = []
    producer.produce(topic, value, partition=partition, on_delivery=lambda err, msg: errors.append(err))
    assert producer.flush(20) == 0
    assert errors == [None]


def test_not_leader_on_produce_is_retried_by_confluent_kafka_and_delivered_once(broker):
    rule = broker.faults.inject(api="Produce", topic="t", partition=0, error="NOT_LEADER_OR_FOLLOWER", count=3)
    _deliver(_confluent_producer(broker), "t", b"once")
    assert [value for _, _, value in broker.read("t", 0)] == [b"once"]
    assert broker.faults.rules() == [{**rule, "fired": 3, "remaining": 0}]


def test_not_leader_on_produce_is_retried_by_kafka_python_and_delivered_once(broker):
    broker.faults.inject(api="Produce", topic="t", error="NOT_LEADER_OR_FOLLOWER", count=2)
    producer = kafka.KafkaProducer(bootstrap_servers=broker.bootstrap_servers, retries=5, retry_backoff_ms=20)
    producer.send("t", b"once", partition=1).get(timeout=20)
    producer.close()
    assert [value for _, _, value in broker.read("t", 1)] == [b"once"]
    assert broker.faults.rules()[0]["fired"] == 2


def test_only_the_matched_partition_of_a_request_gets_the_error(broker):
    broker.faults.inject(api="Produce", topic="t", partition=1, error="NOT_LEADER_OR_FOLLOWER")
    assert broker.produce("t", [b"served"], partition=0) == [0]
    with pytest.raises(NotLeaderOrFollowerError):
        broker.produce("t", [b"refused"], partition=1)
    assert broker.faults.clear() == 1
    assert broker.produce("t", [b"served"], partition=1) == [0]
    assert broker.faults.rules() == []


def test_not_leader_on_one_fetched_partition_is_retried_and_both_are_consumed(broker):
    """kafka-python fetches in a fetch session (KIP-227): the faulted partition stays in it, so it is fetched again."""
    for partition in (0, 1):
        broker.produce("t", [f"{partition}-a", f"{partition}-b"], partition=partition)
    broker.faults.inject(api="Fetch", topic="t", partition=1, error="NOT_LEADER_OR_FOLLOWER", count=1)
    consumer = kafka.KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, fetch_max_wait_ms=50)
    consumer.assign([kafka.TopicPartition("t", 0), kafka.TopicPartition("t", 1)])
    consumer.seek_to_beginning()
    consumed: set[bytes] = set()
    deadline = time.monotonic() + 15
    while len(consumed) < 4 and time.monotonic() < deadline:
        for records in consumer.poll(200).values():
            consumed |= {record.value for record in records}
    consumer.close()
    assert consumed == {b"0-a", b"0-b", b"1-a", b"1-b"}
    assert broker.faults.rules()[0]["fired"] == 1


def test_a_delayed_fetch_shows_in_the_consumers_latency(broker):
    broker.produce("t", [b"late"])

    def first_record_after() -> float:
        consumer = confluent_kafka.Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "g",
                                             "fetch.wait.max.ms": 10})
        consumer.assign([confluent_kafka.TopicPartition("t", 0, 0)])
        started = time.monotonic()
        message = None
        while message is None or message.error() is not None:
            message = consumer.poll(5)
        consumer.close()
        return time.monotonic() - started

    quick = first_record_after()
    broker.faults.inject(api="Fetch", topic="t", delay_ms=1500, count=1)
    delayed = first_record_after()
    assert delayed >= 1.5 > quick, (quick, delayed)
    assert broker.faults.rules()[0]["fired"] == 1


@pytest.mark.parametrize("idempotent", [True, False])
def test_a_dropped_produce_answer_times_out_and_is_retried(broker, idempotent):
    """The request is served and its answer lost, as when an acknowledgement goes missing: kafka-python times
    out, retries, and appends the record twice unless its producer is idempotent."""
    broker.faults.inject(api="Produce", drop=True, count=1)
    producer = kafka.KafkaProducer(bootstrap_servers=broker.bootstrap_servers, enable_idempotence=idempotent,
                                   request_timeout_ms=1000, retries=3, retry_backoff_ms=20)
    started = time.monotonic()
    producer.send("t", b"acked late", partition=0).get(timeout=20)
    assert time.monotonic() - started >= 1.0  # the client waited for the lost answer, then retried
    producer.close()
    assert [value for _, _, value in broker.read("t", 0)] == [b"acked late"] * (1 if idempotent else 2)
    assert broker.faults.rules()[0]["fired"] == 1


def test_a_closed_connection_is_reopened_and_the_record_delivered_once(broker):
    broker.faults.inject(api="Produce", close=True, count=1)
    _deliver(_confluent_producer(broker), "t", b"after reconnect")
    assert [value for _, _, value in broker.read("t", 0)] == [b"after reconnect"]
    assert broker.faults.rules()[0]["fired"] == 1


def test_a_share_of_requests_fires_repeatably_with_a_seed(broker):
    broker.faults.inject(api="Produce", topic="t", error="NOT_LEADER_OR_FOLLOWER", share=0.5, seed=7)
    outcomes = []
    for _ in range(20):
        try:
            broker.produce("t", [b"x"])
            outcomes.append(True)
        except NotLeaderOrFollowerError:
            outcomes.append(False)
    assert 0 < outcomes.count(False) < 20
    assert broker.faults.rules()[0]["fired"] == outcomes.count(False)


def test_a_rule_picks_requests_by_client_id_and_version(broker):
    broker.faults.inject(api="Produce", client_id="someone-else", error="NOT_LEADER_OR_FOLLOWER")
    broker.faults.inject(api="Produce", version=3, error="NOT_LEADER_OR_FOLLOWER")
    assert broker.produce("t", [b"not picked"]) == [0]  # the helpers send Produce v9 as "wirebroker-embedded"
    broker.faults.inject(api="Produce", client_id="wirebroker-embedded", version=9, error="NOT_LEADER_OR_FOLLOWER")
    with pytest.raises(NotLeaderOrFollowerError):
        broker.produce("t", [b"picked"])
    assert [rule["fired"] for rule in broker.faults.rules()] == [0, 0, 1]


def test_a_bad_rule_is_refused_by_name(broker):
    with pytest.raises(ValueError, match="eror"):
        broker.faults.inject(api="Produce", eror="NOT_LEADER_OR_FOLLOWER")
    with pytest.raises(ValueError, match="NOT_A_CODE"):
        broker.faults.inject(api="Produce", error="NOT_A_CODE")
    with pytest.raises(ValueError, match="Prodce"):
        broker.faults.inject(api="Prodce", drop=True)


def _curl(method: str, url: str, body: dict | None = None) -> tuple[int, str]:
    args = ["curl", "-s", "-X", method, "-w", "\n%{http_code}", url]
    if body is not None:
        args += ["-H", "Content-Type: application/json", "-d", json.dumps(body)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=30, check=True).stdout
    text, _, status = out.rpartition("\n")
    return int(status), text


def test_curl_sets_lists_and_clears_faults_of_a_broker_in_a_child_process():
    with wirebroker.Broker(process=True) as broker:  # its HTTP port is on, on a free port
        http = broker.http_url
        broker.create_topic("t")
        status, text = _curl("POST", f"{http}/faults",
                             {"api": "Produce", "topic": "t", "error": "NOT_LEADER_OR_FOLLOWER", "count": 1})
        assert status == 201 and json.loads(text)["id"] == 1
        with pytest.raises(NotLeaderOrFollowerError):
            broker.produce("t", [b"refused"])
        assert broker.produce("t", [b"served"]) == [0]
        status, text = _curl("GET", f"{http}/faults")
        assert status == 200 and [(r["api"], r["fired"], r["remaining"]) for r in json.loads(text)] == [
            ("Produce", 1, 0)]
        assert _curl("POST", f"{http}/faults", {"api": "Produce", "eror": 6})[0] == 400
        broker.faults.inject(api="Fetch", error="NOT_LEADER_OR_FOLLOWER")  # the same call, over HTTP
        assert len(broker.faults.rules()) == 2
        status, text = _curl("DELETE", f"{http}/faults")
        assert (status, json.loads(text)) == (200, {"cleared": 2})
        assert broker.read("t") == [(0, None, b"served")]
