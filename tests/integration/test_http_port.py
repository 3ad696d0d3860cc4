"""The HTTP port (`http.listener`) of a real broker process, checked against what real clients did."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

import wirebroker
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


def get_metrics(url: str) -> dict[tuple[str, tuple], float]:
    """Every sample of /metrics, parsed by prometheus_client's own parser: (name, sorted labels) -> value."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(url + "/metrics", timeout=10) as response:
        assert response.headers["Content-Type"].startswith("text/plain; version=")
        text = response.read().decode()
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def topic_sample(metrics: dict, name: str, topic: str = TOPIC) -> float:
    return metrics.get((name, (("topic", topic),)), 0)


def test_metrics_move_by_the_bytes_and_records_produced_and_consumed(http_broker, tmp_path):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    producer = KafkaProducer(bootstrap_servers=http_broker.bootstrap, acks="all", linger_ms=5)
    producer.send(TOPIC, b"first", partition=0).get(timeout=30)  # the topic exists; what follows is measured
    before = get_metrics(http_broker.http_url)
    segment = http_broker.data_dir / f"{TOPIC}-0" / f"{0:020d}.log"
    size_before = segment.stat().st_size
    for i in range(40):
        producer.send(TOPIC, b"value-%d" % i, key=b"k%d" % (i % 3), partition=0)
    producer.flush()
    producer.close()
    appended = segment.stat().st_size - size_before
    consumer = KafkaConsumer(bootstrap_servers=http_broker.bootstrap, auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=3000)
    consumer.assign([TopicPartition(TOPIC, 0)])
    assert len(list(consumer)) == 41
    after = get_metrics(http_broker.http_url)
    consumer.close()

    def moved(name: str) -> float:
        return topic_sample(after, name) - topic_sample(before, name)

    assert appended > 40 * len(b"value-00")
    assert moved("kafka_server_brokertopicmetrics_bytesin_total") == appended
    assert moved("kafka_server_brokertopicmetrics_messagesin_total") == 40
    assert topic_sample(after, "kafka_server_brokertopicmetrics_bytesout_total") == segment.stat().st_size
    produced = [labels for name, labels in after if name == "kafka_network_requestmetrics_requests_total"
                and dict(labels)["request"] == "Produce"]
    assert produced, "no Produce request counted"
    for labels in produced:
        count = after[("kafka_network_requestmetrics_requests_total", labels)]
        assert after[("kafka_network_requestmetrics_totaltimems_count", labels)] == count
        assert after[("kafka_network_requestmetrics_totaltimems_bucket", tuple(sorted(labels + (("le", "+Inf"),))))] == count
        assert after[("kafka_network_requestmetrics_totaltimems_sum", labels)] > 0
    assert after[("kafka_log_log_logendoffset", (("partition", "0"), ("topic", TOPIC)))] == 41
    assert after[("kafka_server_replicamanager_underreplicatedpartitions", ())] == 0
    assert after[("kafka_server_socket_server_metrics_connection_count", (("listener", "PLAINTEXT"),))] >= 1
    assert ("kafka_server_delayedoperationpurgatory_purgatorysize", (("delayedoperation", "Fetch"),)) in after
    assert after[("kafka_network_requestchannel_requestqueuesize", ())] == 0


def test_compat_gives_each_key_its_advertised_range_and_the_tests_that_exercise_it(http_broker):
    from wirebroker.apis.emulation import api_table

    compat = get_json(http_broker.http_url + "/compat")
    rows = {row["name"]: row for row in compat["apis"]}
    assert compat["emulating"] is None
    for key, versions in api_table().advertised.items():
        assert next(row for row in compat["apis"] if row["key"] == key)["advertised"] == list(versions)
    assert "tests/integration/test_http_port.py" in rows["Produce"]["tests"]  # this file's KafkaProducer
    assert "tests/integration/test_txn_markers_tools.py" in rows["DescribeProducers"]["tests"]
    kafka_only = [row for row in compat["apis"] if row["key"] not in api_table().advertised]
    assert kafka_only and all(row["advertised"] is None and row["kafka"] for row in kafka_only)


@pytest.mark.parametrize("process", [False, True], ids=["thread", "process"])
def test_the_embedded_broker_serves_the_http_port_on_a_free_port(process):
    with wirebroker.Broker(process=process) as broker:
        broker.create_topic("embedded-orders", partitions=2)
        broker.produce("embedded-orders", [b"a", b"b"], partition=1)
        state = get_json(broker.http_url + "/state")
        topic = next(t for t in state["topics"] if t["name"] == "embedded-orders")
        assert [p["high_watermark"] for p in topic["partitions"]] == [0, 2]
        assert topic_sample(get_metrics(broker.http_url), "kafka_server_brokertopicmetrics_messagesin_total",
                            "embedded-orders") == 2
    with wirebroker.Broker(process=process, http_listener="") as broker:
        assert broker.http_url is None


def test_a_kip_848_consumer_group_in_state_and_metrics():
    from confluent_kafka import Consumer

    with wirebroker.Broker() as broker:
        broker.create_topic("kip848-orders", partitions=2)
        consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "kip848-readers",
                             "group.protocol": "consumer", "client.id": "reader-848"})
        try:
            consumer.subscribe(["kip848-orders"])
            deadline = time.monotonic() + 30
            while not consumer.assignment() and time.monotonic() < deadline:
                consumer.poll(0.2)
            state = get_json(broker.http_url + "/state")
            metrics = get_metrics(broker.http_url)
        finally:
            consumer.close()
    group = next(g for g in state["groups"] if g["group_id"] == "kip848-readers")
    assert (group["type"], group["state"]) == ("consumer", "Stable")
    [member] = group["members"]
    assert (member["client_id"], member["assignment"]) == ("reader-848", {"kip848-orders": [0, 1]})
    assert metrics[("kafka_server_group_coordinator_metrics_group_count",
                    (("protocol", "consumer"), ("state", "Stable")))] == 1
