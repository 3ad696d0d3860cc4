"""CreateTopics, CreatePartitions and DeleteTopics in ZooKeeper mode wait in the topic purgatory, never on a request
thread (apis/delayed_topic_change.py), on three wirebroker processes and a real ZooKeeper.

The answer comes once the answering broker's metadata shows the change (every partition led, or the topic gone);
timeout_ms=0 answers REQUEST_TIMED_OUT at once while the change goes on; with the controller paused the answer
times out at timeout_ms while the broker keeps answering its other connections. Every broker runs one network
thread (and requests inline on it, num.io.threads=0), so a request held on that thread would hold them all.
"""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from tests.integration.cluster_process import ClusterProcess
from tests.integration.raw_client import RawClient
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.create_partitions import CreatePartitionsRequest
from wirebroker.protocol.messages.create_topics import CreateTopicsRequest, CreateTopicsResponse
from wirebroker.protocol.messages.delete_topics import DeleteTopicsRequest
from wirebroker.protocol.messages.metadata import MetadataRequest
from wirebroker.protocol.primitives import UUID_ZERO

WAIT_S = 60
CREATE_TOPICS_VERSION, DELETE_TOPICS_VERSION, CREATE_PARTITIONS_VERSION, METADATA_VERSION = 7, 6, 3, 12
PROMPT_S = 0.5  # an answer not held behind another connection's request

SETTINGS = {"num.network.threads": "1", "controlled.shutdown.retry.backoff.ms": "200",
            "auto.leader.rebalance.enable": "false"}


@pytest.fixture
def cluster(tmp_path):
    with ClusterProcess(tmp_path, brokers=3, overrides=SETTINGS) as running:
        yield running


def new_topic() -> str:
    return f"purgatory-{uuid.uuid4().hex[:8]}"


def not_controller(cluster: ClusterProcess) -> int:
    controller = cluster.wait_until(cluster.controller_id, WAIT_S, "a controller")
    return next(n for n in cluster.node_ids if n != controller)


def create_topics(cluster: ClusterProcess, via: int, name: str, timeout_ms: int, partitions: int = 3,
                  validate_only: bool = False) -> CreateTopicsResponse.CreatableTopicResult:
    with RawClient(cluster.broker(via).bootstrap) as client:
        client.sock.settimeout(WAIT_S)
        response = client.request(19, CREATE_TOPICS_VERSION, timeout_ms=timeout_ms, validate_only=validate_only,
                                  topics=[CreateTopicsRequest.CreatableTopic(name=name, num_partitions=partitions,
                                                                             replication_factor=3)])
    return response.topics[0]


def delete_topic(cluster: ClusterProcess, via: int, name: str, timeout_ms: int) -> int:
    with RawClient(cluster.broker(via).bootstrap) as client:
        client.sock.settimeout(WAIT_S)
        response = client.request(20, DELETE_TOPICS_VERSION, timeout_ms=timeout_ms,
                                  topics=[DeleteTopicsRequest.DeleteTopicState(name=name, topic_id=UUID_ZERO)])
    return response.responses[0].error_code


def create_partitions(cluster: ClusterProcess, via: int, name: str, count: int, timeout_ms: int) -> int:
    with RawClient(cluster.broker(via).bootstrap) as client:
        client.sock.settimeout(WAIT_S)
        response = client.request(37, CREATE_PARTITIONS_VERSION, timeout_ms=timeout_ms, validate_only=False,
                                  topics=[CreatePartitionsRequest.CreatePartitionsTopic(name=name, count=count,
                                                                                        assignments=None)])
    return response.results[0].error_code


def leaders(cluster: ClusterProcess, name: str, via: int) -> dict[int, int] | None:
    """partition -> leader as broker `via` answers Metadata now; None when it does not know the topic."""
    topic = cluster.metadata([name], via).topics[0]
    if topic.error_code != ErrorCode.NONE:
        return None
    return {p.partition_index: p.leader_id for p in topic.partitions}


def every_partition_led(cluster: ClusterProcess, name: str, partitions: int) -> bool:
    return all((led := leaders(cluster, name, via)) is not None and sorted(led) == list(range(partitions))
               and min(led.values()) >= 0 for via in cluster.node_ids)


def test_answers_come_once_the_answering_broker_shows_the_change(cluster):
    via, name = not_controller(cluster), new_topic()
    created = create_topics(cluster, via, name, timeout_ms=30_000)
    assert created.error_code == ErrorCode.NONE, created
    assert created.num_partitions == 3 and any(created.topic_id)
    led = leaders(cluster, name, via)
    assert led is not None and sorted(led) == [0, 1, 2] and min(led.values()) >= 0, led

    assert create_partitions(cluster, via, name, 5, timeout_ms=30_000) == ErrorCode.NONE
    led = leaders(cluster, name, via)
    assert led is not None and sorted(led) == [0, 1, 2, 3, 4] and min(led.values()) >= 0, led

    assert delete_topic(cluster, via, name, timeout_ms=30_000) == ErrorCode.NONE
    assert leaders(cluster, name, via) is None


def test_timeout_zero_answers_request_timed_out_and_the_change_goes_on(cluster):
    via, name = not_controller(cluster), new_topic()
    checked = create_topics(cluster, via, name, timeout_ms=0, validate_only=True)
    assert checked.error_code == ErrorCode.NONE  # validate_only answers at once: nothing to wait for
    assert cluster.zk().exists(f"/brokers/topics/{name}") is None

    created = create_topics(cluster, via, name, timeout_ms=0)
    assert created.error_code == ErrorCode.REQUEST_TIMED_OUT, created
    assert any(created.topic_id)  # as Kafka's: the id stays, the configs and counts go
    assert (created.num_partitions, created.replication_factor, created.configs) == (-1, -1, [])
    cluster.wait_until(lambda: every_partition_led(cluster, name, 3), WAIT_S, f"{name} led on every broker")
    again = create_topics(cluster, via, name, timeout_ms=0)
    assert again.error_code == ErrorCode.TOPIC_ALREADY_EXISTS  # a failure is answered as it is

    assert create_partitions(cluster, via, name, 4, timeout_ms=0) == ErrorCode.REQUEST_TIMED_OUT
    cluster.wait_until(lambda: every_partition_led(cluster, name, 4), WAIT_S, f"{name}'s 4th partition led")

    assert delete_topic(cluster, via, name, timeout_ms=0) == ErrorCode.REQUEST_TIMED_OUT
    cluster.wait_until(lambda: all(leaders(cluster, name, n) is None for n in cluster.node_ids), WAIT_S,
                       f"{name} deleted everywhere")


def test_metadata_auto_creation_answers_leader_not_available_at_once(cluster):
    via, name = not_controller(cluster), new_topic()
    with RawClient(cluster.broker(via).bootstrap) as client:
        started = time.monotonic()
        response = client.request(3, METADATA_VERSION, allow_auto_topic_creation=True,
                                  topics=[MetadataRequest.MetadataRequestTopic(name=name)])
        elapsed = time.monotonic() - started
    assert response.topics[0].error_code == ErrorCode.LEADER_NOT_AVAILABLE
    assert elapsed < PROMPT_S * 2, elapsed
    cluster.wait_until(lambda: every_partition_led(cluster, name, 1), WAIT_S, f"auto-created {name} led")


def test_with_the_controller_paused_the_answer_times_out_and_the_broker_keeps_serving(cluster):
    controller = cluster.wait_until(cluster.controller_id, WAIT_S, "a controller")
    via, name = not_controller(cluster), new_topic()
    # The broker's network thread has answered Metadata on another connection before the pause: it is ready.
    assert cluster.metadata(None, via).controller_id == controller
    answers: dict[str, object] = {}

    def create() -> None:
        started = time.monotonic()
        answers["result"] = create_topics(cluster, via, name, timeout_ms=1000)
        answers["elapsed"] = time.monotonic() - started

    cluster.pause(controller)
    try:
        creating = threading.Thread(target=create)
        creating.start()
        time.sleep(0.2)  # the CreateTopics is parked by now
        with RawClient(cluster.broker(via).bootstrap) as client:
            started = time.monotonic()
            versions = client.request(18, 3, client_software_name="raw-test", client_software_version="1.0")
            assert versions.error_code == ErrorCode.NONE
            assert client.request(3, METADATA_VERSION, topics=None).controller_id == controller
            served_in = time.monotonic() - started
        creating.join(timeout=WAIT_S)
    finally:
        cluster.resume(controller)
    assert served_in < PROMPT_S, f"ApiVersions and Metadata took {served_in:.2f}s behind the parked CreateTopics"
    assert answers["result"].error_code == ErrorCode.REQUEST_TIMED_OUT, answers["result"]
    assert 0.9 <= answers["elapsed"] < 3, answers["elapsed"]
    assert cluster.zk().exists(f"/brokers/topics/{name}") is not None  # written; the controller acts on resume
    cluster.wait_until(lambda: every_partition_led(cluster, name, 3), WAIT_S, f"{name} led once the controller runs")
