"""Replication between real broker processes, with the test acting as the controller (issue 11).

Three wirebroker processes run with `wirebroker.external.controller=true` (cluster members without ZooKeeper).
The test sends them what a controller sends (UpdateMetadata v7, LeaderAndIsr v6) and answers their AlterPartition
v2 requests with a small fake controller that accepts every ISR proposal. The brokers' inter-broker listener is
called INTERNAL (the same port as PLAINTEXT): the fake controller has only an INTERNAL endpoint, so clients, which
see PLAINTEXT endpoints, never learn of it.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import struct
import threading
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Producer

from tests.integration.broker_process import BrokerProcess
from tests.integration.raw_client import RawClient
from wirebroker.config import new_cluster_id
from wirebroker.protocol import records
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.headers import (
    read_request_header,
    response_header_bytes,
    response_header_version,
)
from wirebroker.protocol.messages.alter_partition import (
    AlterPartitionRequest,
    AlterPartitionResponse,
)
from wirebroker.protocol.messages.delete_records import DeleteRecordsRequest
from wirebroker.protocol.messages.fetch import FetchRequest
from wirebroker.protocol.messages.leader_and_isr import LeaderAndIsrRequest
from wirebroker.protocol.messages.list_offsets import ListOffsetsRequest
from wirebroker.protocol.messages.offset_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
)
from wirebroker.protocol.messages.produce import ProduceRequest
from wirebroker.protocol.messages.stop_replica import StopReplicaRequest
from wirebroker.protocol.messages.update_metadata import UpdateMetadataRequest

CONTROLLER_ID = 100
CONTROLLER_EPOCH = 1
CLUSTER_ID = new_cluster_id()  # one cluster: clients refuse brokers that report different ids
INTERNAL = "INTERNAL"
TOPIC = "replicated"
LAG_MS = 2000
ALTER_PARTITION_KEY = 56
SEGMENT = "00000000000000000000.log"


class FakeController:
    """Answers AlterPartition as a ZooKeeper controller that accepts every proposal: the ISR as proposed, the
    partition epoch one higher. Every request is kept for the test to look at."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.requests: list[AlterPartitionRequest] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        client = RawClient.over(connection)
        try:
            while True:
                frame = memoryview(client.read_frame())
                header, body_start = read_request_header(frame)
                assert header.api_key == ALTER_PARTITION_KEY, header
                request, _ = AlterPartitionRequest.read(frame, body_start, header.api_version)
                with self._lock:
                    self.requests.append(request)
                response = AlterPartitionResponse(topics=[
                    AlterPartitionResponse.TopicData(topic_id=t.topic_id, partitions=[
                        AlterPartitionResponse.PartitionData(
                            partition_index=p.partition_index, leader_id=request.broker_id,
                            leader_epoch=p.leader_epoch, isr=list(p.new_isr), partition_epoch=p.partition_epoch + 1)
                        for p in t.partitions])
                    for t in request.topics])
                payload = (response_header_bytes(header.correlation_id,
                                                 response_header_version(header.api_key, header.api_version))
                           + response.encode(header.api_version))
                connection.sendall(struct.pack(">i", len(payload)) + payload)
        except (ConnectionError, OSError):
            connection.close()

    def proposals(self) -> list[tuple[int, list[int], int]]:
        """(broker id, proposed ISR, partition epoch it was based on) of every AlterPartition partition so far."""
        with self._lock:
            return [(r.broker_id, list(p.new_isr), p.partition_epoch) for r in self.requests for t in r.topics
                    for p in t.partitions]

    def wait_for(self, isr: list[int], timeout: float = 15) -> tuple[int, list[int], int]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for proposal in self.proposals():
                if sorted(proposal[1]) == sorted(isr):
                    return proposal
            time.sleep(0.05)
        raise AssertionError(f"no AlterPartition proposed the ISR {isr}; proposals: {self.proposals()}")

    def close(self) -> None:
        self.server.close()


class Cluster:
    """Brokers 1..n and the fake controller; the test's own methods are the controller's requests."""

    def __init__(self, tmp_path: Path, size: int = 3, **overrides: str) -> None:
        self.controller = FakeController()
        self.topic_id = uuid.uuid4().bytes
        self.brokers = {
            node: BrokerProcess(tmp_path / f"broker{node}", {
                "node.id": str(node),
                "cluster.id": CLUSTER_ID,
                "wirebroker.external.controller": "true",
                "inter.broker.listener.name": INTERNAL,
                "auto.create.topics.enable": "false",
                "replica.lag.time.max.ms": str(LAG_MS),
                "replica.fetch.backoff.ms": "200",
                "replica.socket.timeout.ms": "5000",
                **overrides,
            })
            for node in range(1, size + 1)
        }

    def start(self) -> Cluster:
        for broker in self.brokers.values():
            broker.start()
        return self

    def close(self) -> None:
        for broker in self.brokers.values():
            if broker.process is not None and broker.process.poll() is None:
                broker.process.send_signal(signal.SIGCONT)
            try:
                broker.stop()
            finally:
                broker.kill()
        self.controller.close()

    def _live_brokers(self) -> list[UpdateMetadataRequest.UpdateMetadataBroker]:
        def endpoint(port: int, listener: str) -> UpdateMetadataRequest.UpdateMetadataEndpoint:
            return UpdateMetadataRequest.UpdateMetadataEndpoint(port=port, host="127.0.0.1", listener=listener,
                                                                security_protocol=0)

        brokers = [UpdateMetadataRequest.UpdateMetadataBroker(
            id=node, endpoints=[endpoint(b.port, "PLAINTEXT"), endpoint(b.port, INTERNAL)], rack=None)
            for node, b in self.brokers.items()]
        brokers.append(UpdateMetadataRequest.UpdateMetadataBroker(
            id=CONTROLLER_ID, endpoints=[endpoint(self.controller.port, INTERNAL)], rack=None))
        return brokers

    def update_metadata(self, to: list[int], leader: int, leader_epoch: int, isr: list[int],
                        partition_epoch: int = 0) -> None:
        state = UpdateMetadataRequest.UpdateMetadataPartitionState(
            partition_index=0, controller_epoch=CONTROLLER_EPOCH, leader=leader, leader_epoch=leader_epoch, isr=isr,
            zk_version=partition_epoch, replicas=sorted(self.brokers), offline_replicas=[])
        for node in to:
            with RawClient(self.brokers[node].bootstrap) as client:
                response = client.request(6, 7, controller_id=CONTROLLER_ID, controller_epoch=CONTROLLER_EPOCH,
                                          live_brokers=self._live_brokers(), topic_states=[
                                              UpdateMetadataRequest.UpdateMetadataTopicState(
                                                  topic_name=TOPIC, topic_id=self.topic_id, partition_states=[state])])
            assert response.error_code == ErrorCode.NONE

    def leader_and_isr(self, node: int, leader: int, leader_epoch: int, isr: list[int], partition_epoch: int = 0,
                       controller_epoch: int = CONTROLLER_EPOCH) -> tuple[int, int]:
        """Send one broker the partition's state; (top-level error, partition error)."""
        state = LeaderAndIsrRequest.LeaderAndIsrPartitionState(
            partition_index=0, controller_epoch=controller_epoch, leader=leader, leader_epoch=leader_epoch, isr=isr,
            partition_epoch=partition_epoch, replicas=sorted(self.brokers), is_new=True)
        with RawClient(self.brokers[node].bootstrap) as client:
            response = client.request(4, 6, controller_id=CONTROLLER_ID, controller_epoch=controller_epoch, topic_states=[
                LeaderAndIsrRequest.LeaderAndIsrTopicState(topic_name=TOPIC, topic_id=self.topic_id,
                                                           partition_states=[state])],
                live_leaders=[LeaderAndIsrRequest.LeaderAndIsrLiveLeader(
                    broker_id=leader, host_name="127.0.0.1", port=self.brokers[leader].port)])
        (topic,) = response.topics
        (partition,) = topic.partition_errors
        return response.error_code, partition.error_code

    def elect(self, leader: int, leader_epoch: int, isr: list[int], to: list[int] | None = None) -> None:
        """What a controller does for a new leader: UpdateMetadata, then LeaderAndIsr to every replica."""
        to = sorted(self.brokers) if to is None else to
        self.update_metadata(to, leader, leader_epoch, isr)
        for node in to:
            assert self.leader_and_isr(node, leader, leader_epoch, isr) == (ErrorCode.NONE, ErrorCode.NONE)

    def pause(self, node: int) -> None:
        os.kill(self.brokers[node].process.pid, signal.SIGSTOP)

    def resume(self, node: int) -> None:
        os.kill(self.brokers[node].process.pid, signal.SIGCONT)

    def segment(self, node: int) -> bytes:
        return (self.brokers[node].data_dir / f"{TOPIC}-0" / SEGMENT).read_bytes()

    def wait_identical(self, nodes: list[int], timeout: float = 20) -> bytes:
        deadline = time.monotonic() + timeout
        while True:
            segments = [self.segment(node) for node in nodes]
            if all(s == segments[0] for s in segments):
                return segments[0]
            if time.monotonic() > deadline:
                raise AssertionError(f"segments differ: sizes {[len(s) for s in segments]}")
            time.sleep(0.1)


@pytest.fixture
def cluster_factory(tmp_path):
    clusters: list[Cluster] = []

    def start(**overrides: str) -> Cluster:
        cluster = Cluster(tmp_path, **overrides)
        clusters.append(cluster)
        return cluster.start()

    yield start
    for cluster in clusters:
        cluster.close()


def produce(bootstrap: str, values: list[bytes], acks: int = -1, timeout_ms: int = 10000) -> int:
    batch = records.build_batch([(int(time.time() * 1000), None, value, []) for value in values])
    with RawClient(bootstrap) as client:
        response = client.request(0, 9, acks=acks, timeout_ms=timeout_ms, topic_data=[
            ProduceRequest.TopicProduceData(name=TOPIC, partition_data=[
                ProduceRequest.PartitionProduceData(index=0, records=batch)])])
    return response.responses[0].partition_responses[0].error_code


def consumer_fetch(bootstrap: str, offset: int = 0):
    """A consumer's fetch of partition 0: (error code, high watermark, record bytes)."""
    with RawClient(bootstrap) as client:
        response = client.request(1, 12, replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20,
                                  session_id=0, session_epoch=-1, topics=[FetchRequest.FetchTopic(
                                      topic=TOPIC, partitions=[FetchRequest.FetchPartition(
                                          partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)])])
    partition = response.responses[0].partitions[0]
    return partition.error_code, partition.high_watermark, bytes(partition.records or b"")


def replica_fetch(bootstrap: str, replica_id: int, offset: int) -> tuple[int, bytes]:
    """A follower's Fetch v15 (replica id in ReplicaState, topic by id): (error code, record bytes)."""
    with RawClient(bootstrap) as client:
        topic_id = client.request(3, 12, topics=None).topics[0].topic_id
        response = client.request(1, 15, replica_state=FetchRequest.ReplicaState(replica_id=replica_id),
                                  max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, session_id=0, session_epoch=-1,
                                  topics=[FetchRequest.FetchTopic(topic_id=topic_id, partitions=[
                                      FetchRequest.FetchPartition(partition=0, fetch_offset=offset,
                                                                  partition_max_bytes=1 << 20)])])
    partition = response.responses[0].partitions[0]
    return partition.error_code, bytes(partition.records or b"")


def wait_until(condition, timeout: float = 15, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_acks_all_is_replicated_byte_for_byte_and_the_high_watermark_waits_for_followers(cluster_factory):
    cluster = cluster_factory()
    cluster.elect(leader=1, leader_epoch=0, isr=[1, 2, 3])
    leader, follower = cluster.brokers[1].bootstrap, cluster.brokers[2].bootstrap

    delivered, failed = [], []
    producer = Producer({"bootstrap.servers": leader, "acks": "all", "linger.ms": 5, "enable.idempotence": True})
    for i in range(200):
        producer.produce(TOPIC, value=b"value-%d" % i, partition=0,
                         on_delivery=lambda err, msg: (failed if err else delivered).append(err or msg.offset()))
    assert producer.flush(30) == 0
    assert not failed and sorted(delivered) == list(range(200))
    log_bytes = cluster.wait_identical([1, 2, 3])
    assert b"value-199" in log_bytes
    assert consumer_fetch(leader)[1] == 200

    # A follower is no leader: producers, consumers, OffsetForLeaderEpoch, ListOffsets and DeleteRecords are sent away
    # (ListOffsets from Kafka's debugging replica id -2 may read a follower).
    assert produce(follower, [b"nope"]) == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert consumer_fetch(follower)[0] == ErrorCode.NOT_LEADER_OR_FOLLOWER
    with RawClient(follower) as client:
        answer = client.request(23, 4, replica_id=-1, topics=[OffsetForLeaderEpochRequest.OffsetForLeaderTopic(
            topic=TOPIC, partitions=[OffsetForLeaderEpochRequest.OffsetForLeaderPartition(partition=0, leader_epoch=0)])])
    assert answer.topics[0].partitions[0].error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    with RawClient(follower) as client:
        for replica_id, expected in ((-1, ErrorCode.NOT_LEADER_OR_FOLLOWER), (-2, ErrorCode.NONE)):
            listed = client.request(2, 7, replica_id=replica_id, topics=[ListOffsetsRequest.ListOffsetsTopic(
                name=TOPIC, partitions=[ListOffsetsRequest.ListOffsetsPartition(partition_index=0, timestamp=-1)])])
            assert listed.topics[0].partitions[0].error_code == expected, replica_id
        deleted = client.request(21, 2, timeout_ms=1000, topics=[DeleteRecordsRequest.DeleteRecordsTopic(
            name=TOPIC, partitions=[DeleteRecordsRequest.DeleteRecordsPartition(partition_index=0, offset=1)])])
        assert deleted.topics[0].partitions[0].error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    # KIP-951: produce v10+ and fetch v16+ say where the leader is.
    with RawClient(follower) as client:
        produced = client.request(0, 11, acks=-1, timeout_ms=1000, topic_data=[ProduceRequest.TopicProduceData(
            name=TOPIC, partition_data=[ProduceRequest.PartitionProduceData(
                index=0, records=records.build_batch([(0, None, b"x", [])]))])])
        topic_id = client.request(3, 12, topics=None).topics[0].topic_id
        fetched = client.request(1, 16, max_wait_ms=0, session_id=0, session_epoch=-1, topics=[FetchRequest.FetchTopic(
            topic_id=topic_id, partitions=[FetchRequest.FetchPartition(partition=0, partition_max_bytes=100)])])
    for answer in (produced.responses[0].partition_responses[0], fetched.responses[0].partitions[0]):
        assert answer.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert (answer.current_leader.leader_id, answer.current_leader.leader_epoch) == (1, 0)
    for endpoints in (produced.node_endpoints, fetched.node_endpoints):
        assert [(e.node_id, e.port) for e in endpoints] == [(1, cluster.brokers[1].port)]
    # Fetch v15 names the follower in ReplicaState (KIP-903): a broker that is no replica is refused.
    assert replica_fetch(leader, replica_id=2, offset=200) == (ErrorCode.NONE, b"")
    assert replica_fetch(leader, replica_id=7, offset=200)[0] == ErrorCode.NOT_LEADER_OR_FOLLOWER

    # Followers paused: an acks=1 append lands, but the high watermark (what consumers see) waits for them.
    cluster.pause(2)
    cluster.pause(3)
    try:
        assert produce(leader, [b"waits"], acks=1) == ErrorCode.NONE
        error, high_watermark, data = consumer_fetch(leader, 200)
        assert (error, high_watermark, data) == (ErrorCode.NONE, 200, b"")
    finally:
        cluster.resume(2)
        cluster.resume(3)
    wait_until(lambda: consumer_fetch(leader)[1] == 201, what="the high watermark to reach 201")
    assert b"waits" in consumer_fetch(leader, 200)[2]
    cluster.wait_identical([1, 2, 3])

    # A follower's high watermark is the leader's, and it is checkpointed like a leader's.
    time.sleep(1.5)  # the follower's next fetch (held at most replica.fetch.wait.max.ms) brings it
    cluster.brokers[2].stop()
    checkpoint = (cluster.brokers[2].data_dir / "replication-offset-checkpoint").read_text().splitlines()
    assert f"{TOPIC} 0 201" in checkpoint


def test_the_controller_epoch_and_leader_epoch_fence_stale_requests(cluster_factory):
    cluster = cluster_factory()
    cluster.elect(leader=1, leader_epoch=3, isr=[1, 2, 3])
    assert cluster.leader_and_isr(2, 1, 3, [1, 2, 3]) == (ErrorCode.NONE, ErrorCode.STALE_CONTROLLER_EPOCH)
    assert cluster.leader_and_isr(2, 1, 4, [1, 2, 3], controller_epoch=0) == (ErrorCode.STALE_CONTROLLER_EPOCH,
                                                                               ErrorCode.STALE_CONTROLLER_EPOCH)
    with RawClient(cluster.brokers[1].bootstrap) as client:
        advertised = {key.api_key for key in client.request(18, 3).api_keys}
    assert not advertised & {4, 5, 6}  # inter-broker APIs are served, not advertised
    with RawClient(cluster.brokers[3].bootstrap) as client:
        metadata = client.request(3, 12, topics=None)
    assert sorted(b.node_id for b in metadata.brokers) == [1, 2, 3]
    assert metadata.controller_id == CONTROLLER_ID
    (partition,) = metadata.topics[0].partitions
    assert (partition.leader_id, partition.leader_epoch, partition.isr_nodes) == (1, 3, [1, 2, 3])
    with RawClient(cluster.brokers[2].bootstrap) as client:
        described = client.request(60, 1, endpoint_type=1)
        (topic,) = client.request(75, 0, response_partition_limit=100).topics
    assert (described.controller_id, sorted(b.broker_id for b in described.brokers)) == (CONTROLLER_ID, [1, 2, 3])
    assert (topic.name, topic.partitions[0].leader_id, topic.partitions[0].replica_nodes) == (TOPIC, 1, [1, 2, 3])

    # The leader is gone from the live brokers: clients are told there is no leader.
    cluster.update_metadata([3], leader=4, leader_epoch=4, isr=[4])
    with RawClient(cluster.brokers[3].bootstrap) as client:
        (partition,) = client.request(3, 12, topics=None).topics[0].partitions
    assert (partition.error_code, partition.leader_id) == (ErrorCode.LEADER_NOT_AVAILABLE, -1)

    # StopReplica: an older leader epoch is fenced; a deletion stops the follower and removes its log.
    assert stop_replica(cluster, 3, leader_epoch=2) == ErrorCode.FENCED_LEADER_EPOCH
    assert (cluster.brokers[3].data_dir / f"{TOPIC}-0").exists()
    assert stop_replica(cluster, 3, leader_epoch=-2) == ErrorCode.NONE
    wait_until(lambda: not (cluster.brokers[3].data_dir / f"{TOPIC}-0").exists(), what="the log to be deleted")
    # Not hosted any more, but the partition exists in the cluster: NOT_LEADER_OR_FOLLOWER, as Kafka answers.
    assert consumer_fetch(cluster.brokers[3].bootstrap)[0] == ErrorCode.NOT_LEADER_OR_FOLLOWER


def stop_replica(cluster: Cluster, node: int, leader_epoch: int) -> int:
    with RawClient(cluster.brokers[node].bootstrap) as client:
        response = client.request(5, 3, controller_id=CONTROLLER_ID, controller_epoch=CONTROLLER_EPOCH, topic_states=[
            StopReplicaRequest.StopReplicaTopicState(topic_name=TOPIC, partition_states=[
                StopReplicaRequest.StopReplicaPartitionState(partition_index=0, leader_epoch=leader_epoch,
                                                             delete_partition=True)])])
    assert response.error_code == ErrorCode.NONE
    (partition,) = response.partition_errors
    return partition.error_code


def test_a_paused_follower_leaves_the_isr_and_min_insync_replicas_refuses_acks_all(cluster_factory):
    cluster = cluster_factory(**{"min.insync.replicas": "2"})
    cluster.elect(leader=1, leader_epoch=0, isr=[1, 2, 3])
    leader = cluster.brokers[1].bootstrap
    assert produce(leader, [b"first"]) == ErrorCode.NONE

    # A follower that stops fetching falls behind once the leader has more (Kafka's isCaughtUp): after
    # replica.lag.time.max.ms the leader proposes the ISR without it, and acks=all completes without it.
    cluster.pause(3)
    try:
        started = time.monotonic()
        assert produce(leader, [b"without 3"]) == ErrorCode.NONE
        assert time.monotonic() - started >= LAG_MS / 1000 * 0.9
        assert cluster.controller.proposals() == [(1, [1, 2], 0)]
        cluster.pause(2)
        try:
            # Accepted with the ISR [1, 2], then the ISR shrinks below min.insync.replicas while it waits.
            assert produce(leader, [b"shrinks under it"]) == ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
            assert cluster.controller.wait_for([1]) == (1, [1], 1)
            assert produce(leader, [b"alone"]) == ErrorCode.NOT_ENOUGH_REPLICAS
            assert produce(leader, [b"acks=1 is fine"], acks=1) == ErrorCode.NONE
        finally:
            cluster.resume(2)
    finally:
        cluster.resume(3)
    cluster.controller.wait_for([1, 2, 3])
    wait_until(lambda: produce(leader, [b"all back"]) == ErrorCode.NONE, what="acks=all to succeed again")
    cluster.wait_identical([1, 2, 3])
    assert "Shrinking ISR of replicated-0 from [1, 2, 3] to [1, 2]" in cluster.brokers[1].log_text()
    assert "Broker 1 leads 1 under-replicated partitions: replicated-0 (ISR [1, 2] of [1, 2, 3])" \
        in cluster.brokers[1].log_text()


def test_a_new_leader_makes_the_old_one_truncate_its_divergent_tail(cluster_factory):
    cluster = cluster_factory()
    cluster.elect(leader=1, leader_epoch=0, isr=[1, 2, 3])
    old_leader = cluster.brokers[1]
    assert produce(old_leader.bootstrap, [b"committed-%d" % i for i in range(10)]) == ErrorCode.NONE
    cluster.wait_identical([1, 2, 3])

    # Only the old leader takes these: its followers are paused, and it dies before they could fetch them. The
    # followers' fetches parked at the leader are answered (empty) after replica.fetch.wait.max.ms first; otherwise
    # the append would complete them into the paused followers' sockets.
    cluster.pause(2)
    cluster.pause(3)
    time.sleep(1)
    assert produce(old_leader.bootstrap, [b"divergent-%d" % i for i in range(5)], acks=1) == ErrorCode.NONE
    old_leader.kill()
    cluster.resume(2)
    cluster.resume(3)

    cluster.elect(leader=2, leader_epoch=1, isr=[2, 3], to=[2, 3])
    assert produce(cluster.brokers[2].bootstrap, [b"new-epoch-%d" % i for i in range(7)]) == ErrorCode.NONE
    assert b"divergent" in cluster.segment(1)

    old_leader.start()
    cluster.elect(leader=2, leader_epoch=1, isr=[2, 3], to=[1])
    log_bytes = cluster.wait_identical([1, 2, 3])
    assert b"divergent" not in log_bytes and b"new-epoch-6" in log_bytes and b"committed-9" in log_bytes
    assert "Truncating replicated-0 to offset 10" in old_leader.log_text()
    epochs = [(cluster.brokers[n].data_dir / f"{TOPIC}-0" / "leader-epoch-checkpoint").read_text() for n in (1, 2, 3)]
    assert epochs == [epochs[0]] * 3 and epochs[0].splitlines()[2:] == ["0 0", "1 10"]


def test_a_new_follower_behind_the_leaders_log_start_starts_over_there(cluster_factory):
    cluster = cluster_factory()
    cluster.elect(leader=1, leader_epoch=0, isr=[1, 2], to=[1, 2])
    leader = cluster.brokers[1].bootstrap
    assert produce(leader, [b"r-%d" % i for i in range(10)]) == ErrorCode.NONE
    with RawClient(leader) as client:
        deleted = client.request(21, 2, timeout_ms=5000, topics=[DeleteRecordsRequest.DeleteRecordsTopic(
            name=TOPIC, partitions=[DeleteRecordsRequest.DeleteRecordsPartition(partition_index=0, offset=5)])])
    assert deleted.topics[0].partitions[0].error_code == ErrorCode.NONE

    # Broker 3 joins with an empty log: offset 0 is gone on the leader (OFFSET_OUT_OF_RANGE), so it starts at 5,
    # gets the whole batch holding offset 5, and starts its log at that batch's base offset, as the leader's is.
    assert cluster.leader_and_isr(3, leader=1, leader_epoch=0, isr=[1, 2]) == (ErrorCode.NONE, ErrorCode.NONE)
    wait_until(lambda: (cluster.brokers[3].data_dir / f"{TOPIC}-0" / SEGMENT).exists(), what="broker 3's segment")
    assert b"r-9" in cluster.wait_identical([1, 2, 3])
    cluster.controller.wait_for([1, 2, 3])  # caught up: proposed back into the ISR
    assert "fetch offset 0 is before the leader's log start 5" in cluster.brokers[3].log_text()


def test_acknowledged_records_survive_the_leaders_kill_once_each(cluster_factory):
    cluster = cluster_factory(**{"min.insync.replicas": "2"})
    cluster.elect(leader=1, leader_epoch=0, isr=[1, 2, 3])
    acked, errors = [], []
    producer = Producer({"bootstrap.servers": ",".join(b.bootstrap for b in cluster.brokers.values()),
                         "acks": "all", "enable.idempotence": True, "linger.ms": 2, "compression.type": "none",
                         "topic.metadata.refresh.interval.ms": 500, "retry.backoff.ms": 50})

    def delivered(err, msg) -> None:
        (errors if err else acked).append(err or msg.value())

    sequence = 0
    for phase in ("before", "after"):
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            producer.produce(TOPIC, value=b"v-%06d" % sequence, partition=0, on_delivery=delivered)
            sequence += 1
            producer.poll(0.005)
        if phase == "before":
            cluster.brokers[1].kill()
            cluster.elect(leader=2, leader_epoch=1, isr=[2, 3], to=[2, 3])
    assert producer.flush(30) == 0
    assert not errors and len(acked) == sequence
    log_bytes = cluster.wait_identical([2, 3])
    stored = re.findall(rb"v-(\d{6})\x00", log_bytes)
    assert len(stored) == len(set(stored)) == sequence  # every acknowledged record, once
    assert [int(v) for v in stored] == sorted(int(v) for v in stored)  # in order
