"""Three wirebroker processes in ZooKeeper mode on a real ZooKeeper (tests/integration/cluster_process.py): the
controller side and the broker's ZooKeeper mode.

Registration and one controller; topics created, grown and deleted through clients' admin APIs with the same leaders
and ISR in every broker's Metadata; the controller killed (kill -9) or paused past its session: another takes over
with the next epoch and leadership leaves the lost broker; produce and consume across a leader's loss; a restarted
follower back in the ISR through the leader's AlterPartition; SIGTERM's controlled shutdown; config changes on every
broker; preferred and unclean leader election, the automatic rebalance, reassignment, manual assignments, deletion
while a replica is down, a chroot, an unreachable ZooKeeper, and the controller APIs on the wire. Clients:
kafka-python and confluent-kafka (librdkafka)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest
from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    ElectionType,
    KafkaError,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)
from kafka import TopicPartition as KafkaTopicPartition
from kafka.admin import KafkaAdminClient, NewPartitions, NewTopic
from kafka.errors import (
    InvalidReplicationAssignmentError,
    NoReassignmentInProgressError,
)
from kazoo.client import KazooClient

from tests.integration.broker_process import BrokerProcess, free_port
from tests.integration.cluster_process import ClusterProcess
from tests.integration.raw_client import RawClient
from wirebroker.cluster.zookeeper_server import ZooKeeperServer
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.alter_partition import AlterPartitionRequest
from wirebroker.protocol.messages.describe_configs import DescribeConfigsRequest

WAIT_S = 60
TOPIC_RESOURCE = 2  # DescribeConfigs' resource type of a topic


# The last broker stopped at teardown cannot hand its leaderships to anyone: a short backoff keeps its controlled
# shutdown retries (Kafka's 3 x 5 s) from slowing every test down. Leaders move only when a test moves them: the
# automatic rebalance has a test of its own.
SETTINGS = {"controlled.shutdown.retry.backoff.ms": "200", "auto.leader.rebalance.enable": "false"}


@pytest.fixture
def cluster(tmp_path):
    with ClusterProcess(tmp_path, brokers=3, overrides=SETTINGS) as running:
        yield running


def partition_views(cluster: ClusterProcess, topic: str, via: int) -> dict[int, tuple[int, int, tuple, tuple]]:
    """partition -> (leader, leader epoch, replicas, ISR) as broker `via` answers Metadata."""
    views = {}
    for t in cluster.metadata([topic], via).topics:
        if t.error_code != 0:
            return {}
        for p in t.partitions:
            views[p.partition_index] = (p.leader_id, p.leader_epoch, tuple(sorted(p.replica_nodes)),
                                        tuple(sorted(p.isr_nodes)))
    return views


def same_view_everywhere(cluster: ClusterProcess, topic: str, partitions: int, brokers: list[int]) -> dict:
    views = [partition_views(cluster, topic, via) for via in brokers]
    first = views[0]
    if len(first) == partitions and all(view == first for view in views):
        return first
    return {}


def admin_client(cluster: ClusterProcess) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=30000)


def created_everywhere(cluster: ClusterProcess, prefix: str, partitions: int) -> str:
    """A new topic with replication factor 3, once every broker's Metadata shows it the same."""
    topic = f"{prefix}-{uuid.uuid4().hex[:6]}"
    admin = admin_client(cluster)
    try:
        admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=3)])
    finally:
        admin.close()
    cluster.wait_until(lambda: same_view_everywhere(cluster, topic, partitions, [1, 2, 3]), WAIT_S,
                       "the topic everywhere")
    return topic


def test_brokers_register_and_one_is_controller(cluster):
    assert cluster.registered_brokers() == [1, 2, 3]
    controller = cluster.controller_id()
    assert controller in (1, 2, 3)
    cluster.wait_until(lambda: all(cluster.metadata(via=n).controller_id == controller for n in (1, 2, 3)), WAIT_S,
                       "every broker naming the controller")
    assert sorted(b.node_id for b in cluster.metadata(via=1).brokers) == [1, 2, 3]


def test_topic_created_with_rf3_shows_the_same_leaders_everywhere(cluster):
    topic = f"rf3-{uuid.uuid4().hex[:6]}"
    admin = admin_client(cluster)
    try:
        admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=3)])
        views = cluster.wait_until(lambda: same_view_everywhere(cluster, topic, 3, [1, 2, 3]), WAIT_S,
                                   "the same partition states on every broker")
        for leader, leader_epoch, replicas, isr in views.values():
            assert replicas == (1, 2, 3)
            assert isr == (1, 2, 3)
            assert leader in replicas
            assert leader_epoch == 0
        assert sorted({view[0] for view in views.values()}) == [1, 2, 3]  # leadership spread over the brokers
        state = cluster.partition_state(topic, 0)
        assert (state["leader"], sorted(state["isr"])) == (views[0][0], [1, 2, 3])

        admin.create_partitions({topic: NewPartitions(total_count=5)})
        cluster.wait_until(lambda: same_view_everywhere(cluster, topic, 5, [1, 2, 3]), WAIT_S,
                           "the new partitions on every broker")

        admin.delete_topics([topic])
        cluster.wait_until(lambda: not any(partition_views(cluster, topic, n) for n in (1, 2, 3)), WAIT_S,
                           "the topic gone from every broker")
        cluster.wait_until(lambda: not cluster.zk().exists(f"/brokers/topics/{topic}"), WAIT_S,
                           "the topic's znodes deleted")
        assert not any(cluster.partition_dir(n, topic, 0).exists() for n in (1, 2, 3))
    finally:
        admin.close()


def test_controller_killed_another_takes_over_and_leaders_move(cluster):
    topic = created_everywhere(cluster, "failover", 3)
    old_controller = cluster.controller_id()
    old_epoch = cluster.controller_epoch()

    cluster.kill(old_controller)
    survivors = [n for n in (1, 2, 3) if n != old_controller]
    new_controller = cluster.wait_until(
        lambda: cluster.controller_id() if cluster.controller_id() not in (None, old_controller) else None, WAIT_S,
        "a new controller")
    assert new_controller in survivors
    assert cluster.controller_epoch() == old_epoch + 1
    views = cluster.wait_until(
        lambda: (v := same_view_everywhere(cluster, topic, 3, survivors))
        and all(leader in survivors and old_controller not in isr for leader, _, _, isr in v.values()) and v,
        WAIT_S, "leaders and ISRs without the dead broker on both survivors")
    for leader, leader_epoch, _, isr in views.values():
        assert sorted(isr) == survivors
        assert leader_epoch >= 1
    assert all(cluster.metadata(via=n).controller_id == new_controller for n in survivors)


def test_produce_and_consume_survive_the_loss_of_a_leader(cluster):
    topic = created_everywhere(cluster, "data", 1)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "enable.idempotence": True,
                         "message.timeout.ms": 60000})
    delivered = []

    def send(values):
        for value in values:
            producer.produce(topic, value=value, on_delivery=lambda err, msg: delivered.append(err or msg.value()))
        assert producer.flush(60) == 0

    send([f"before-{i}".encode() for i in range(20)])
    leader = cluster.leader_of(topic, 0)
    cluster.kill(leader)
    survivors = [n for n in (1, 2, 3) if n != leader]
    cluster.wait_until(lambda: cluster.leader_of(topic, 0, via=survivors[0]) in survivors, WAIT_S, "a new leader")
    send([f"after-{i}".encode() for i in range(20)])
    assert all(isinstance(d, bytes) for d in delivered), delivered
    # the idempotent producer's id came from a block claimed in ZooKeeper, unique across the brokers
    assert json.loads(cluster.zk().get("/latest_producer_id_block")[0])["block_start"] == "0"

    expected = [f"before-{i}".encode() for i in range(20)] + [f"after-{i}".encode() for i in range(20)]
    assert read_partition_0(cluster, topic, survivors, 40) == expected


def read_partition_0(cluster: ClusterProcess, topic: str, via: list[int], count: int) -> list[bytes]:
    """`count` records of partition 0 from its start. Assigned, not subscribed: these tests are about the data
    path; groups across a failover are the coordinator's."""
    consumer = Consumer({"bootstrap.servers": ",".join(cluster.broker(n).bootstrap for n in via),
                         "group.id": f"g-{topic}", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    values = []

    def poll() -> bool:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            values.append(message.value())
        return len(values) >= count

    try:
        cluster.wait_until(poll, WAIT_S, f"{count} records consumed")
    finally:
        consumer.close()
    return values


def test_a_restarted_broker_catches_up_and_rejoins_the_isr(cluster):
    topic = created_everywhere(cluster, "rejoin", 1)
    leader = cluster.leader_of(topic, 0)
    follower = next(n for n in (1, 2, 3) if n != leader and n != cluster.controller_id())
    cluster.kill(follower)
    cluster.wait_until(lambda: follower not in cluster.partition_state(topic, 0)["isr"], WAIT_S,
                       "the dead follower out of the ISR")
    producer = Producer({"bootstrap.servers": cluster.broker(leader).bootstrap, "acks": "all"})
    for i in range(10):
        producer.produce(topic, value=f"while-down-{i}".encode())
    assert producer.flush(30) == 0
    before = cluster.partition_state(topic, 0)

    cluster.restart(follower)
    # The leader proposes the ISR expansion (AlterPartition) once the follower has caught up; the controller writes
    # it with the same leader epoch and the next partition epoch.
    after = cluster.wait_until(lambda: (s := cluster.partition_state(topic, 0)) and follower in s["isr"] and s,
                               WAIT_S, "the restarted follower back in the ISR")
    assert after["leader"] == before["leader"] == leader
    assert after["leader_epoch"] == before["leader_epoch"]
    assert after["partition_epoch"] > before["partition_epoch"]
    assert sorted(after["isr"]) == [1, 2, 3]
    cluster.wait_until(lambda: partition_views(cluster, topic, follower).get(0, (None,) * 4)[3] == (1, 2, 3),
                       WAIT_S, "the restarted broker's Metadata showing the full ISR")


def test_sigterm_moves_leadership_away_before_the_broker_stops(cluster):
    topic = created_everywhere(cluster, "shutdown", 3)
    leader = cluster.leader_of(topic, 0)
    before = cluster.partition_state(topic, 0)
    assert cluster.broker(leader).stop() == 0
    after = cluster.partition_state(topic, 0)
    # ControlledShutdown ran before the process exited: the partition already had another leader.
    assert after["leader"] not in (leader, -1)
    assert leader not in after["isr"]
    assert after["leader_epoch"] == before["leader_epoch"] + 1
    assert "Controlled shutdown request returned successfully" in cluster.broker(leader).log_text()


def described_config(cluster: ClusterProcess, topic: str, key: str, via: int) -> str | None:
    with RawClient(cluster.broker(via).bootstrap) as client:
        response = client.request(32, 4, resources=[DescribeConfigsRequest.DescribeConfigsResource(
            resource_type=TOPIC_RESOURCE, resource_name=topic, configuration_keys=[key])])
    [result] = response.results
    return next((c.value for c in result.configs if c.name == key), None)


def test_a_topic_config_change_reaches_every_broker(cluster):
    topic = created_everywhere(cluster, "configs", 1)
    admin = AdminClient({"bootstrap.servers": cluster.broker(1).bootstrap})
    resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
        ConfigEntry("retention.ms", "123456", incremental_operation=AlterConfigOpType.SET)])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)
    assert described_config(cluster, topic, "retention.ms", 1) == "123456"
    # the others take it from the change notification, moments later
    cluster.wait_until(lambda: all(described_config(cluster, topic, "retention.ms", via) == "123456"
                                   for via in (2, 3)), WAIT_S, "the new value on the other brokers")
    assert cluster.zk().get(f"/config/topics/{topic}")[0] == b'{"version":1,"config":{"retention.ms":"123456"}}'
    # every broker applies the notification to its own replica's log
    cluster.wait_until(lambda: all(f"Processing override for entity topics/{topic}" in cluster.broker(n).log_text()
                                   for n in (2, 3)), WAIT_S, "the config change notification on the other brokers")


def test_a_paused_controller_loses_its_session_and_cannot_act_when_resumed(cluster):
    topic = created_everywhere(cluster, "paused", 3)
    old_controller = cluster.controller_id()
    old_epoch = cluster.controller_epoch()
    cluster.pause(old_controller)  # SIGSTOP past zookeeper.session.timeout.ms
    new_controller = cluster.wait_until(
        lambda: cluster.controller_id() if cluster.controller_id() not in (None, old_controller) else None, WAIT_S,
        "a new controller while the old one is paused")
    assert cluster.controller_epoch() == old_epoch + 1
    survivors = [n for n in (1, 2, 3) if n != old_controller]
    cluster.wait_until(lambda: all(cluster.leader_of(topic, p, via=new_controller) in survivors for p in range(3)),
                       WAIT_S, "leaders moved off the paused broker")
    cluster.resume(old_controller)
    cluster.wait_until(lambda: "resigns as controller" in cluster.broker(old_controller).log_text(), WAIT_S,
                       "the old controller resigning")
    cluster.wait_until(lambda: old_controller in cluster.registered_brokers(), WAIT_S, "the old controller back")
    assert cluster.controller_id() == new_controller
    assert cluster.controller_epoch() == old_epoch + 1
    for p in range(3):
        assert cluster.partition_state(topic, p)["controller_epoch"] in (old_epoch, old_epoch + 1)


def test_an_unreachable_zookeeper_fails_the_start_naming_it(tmp_path):
    port = free_port()  # nothing listens there
    result = subprocess.run(
        [sys.executable, "-m", "wirebroker", "--override", f"listeners=PLAINTEXT://127.0.0.1:{free_port()}",
         "--override", f"log.dirs={tmp_path}", "--override", f"zookeeper.connect=127.0.0.1:{port}",
         "--override", "zookeeper.connection.timeout.ms=1000"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert f"could not connect to ZooKeeper at 127.0.0.1:{port} within 1000 ms" in result.stderr


def test_preferred_leader_election_moves_the_lead_back_after_a_restart(cluster):
    topic = created_everywhere(cluster, "preferred", 1)
    preferred = json.loads(cluster.zk().get(f"/brokers/topics/{topic}")[0])["partitions"]["0"][0]
    assert cluster.partition_state(topic, 0)["leader"] == preferred
    assert cluster.broker(preferred).stop() == 0  # controlled shutdown: the lead moves to another replica
    cluster.restart(preferred)
    cluster.wait_until(lambda: sorted(cluster.partition_state(topic, 0)["isr"]) == [1, 2, 3], WAIT_S,
                       "the preferred replica back in the ISR")
    assert cluster.partition_state(topic, 0)["leader"] != preferred

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    results = admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(topic, 0)]).result(30)
    assert list(results.values()) == [None]
    assert cluster.partition_state(topic, 0)["leader"] == preferred
    cluster.wait_until(lambda: all(cluster.leader_of(topic, 0, via=n) == preferred for n in (1, 2, 3)), WAIT_S,
                       "every broker naming the preferred leader")
    again = admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(topic, 0)]).result(30)
    assert [error.code() for error in again.values()] == [KafkaError.ELECTION_NOT_NEEDED]


def test_the_auto_leader_rebalance_gives_the_lead_back_to_the_preferred_replica(tmp_path):
    overrides = {**SETTINGS, "auto.leader.rebalance.enable": "true", "leader.imbalance.check.interval.seconds": "1"}
    with ClusterProcess(tmp_path, brokers=3, overrides=overrides) as cluster:
        topic = created_everywhere(cluster, "rebalance", 1)
        preferred = json.loads(cluster.zk().get(f"/brokers/topics/{topic}")[0])["partitions"]["0"][0]
        assert cluster.broker(preferred).stop() == 0
        assert cluster.partition_state(topic, 0)["leader"] != preferred
        cluster.restart(preferred)
        cluster.wait_until(lambda: cluster.partition_state(topic, 0)["leader"] == preferred, WAIT_S,
                           "the preferred replica leading again without an ElectLeaders request")


def test_a_broker_restarted_right_after_kill_9_waits_out_its_old_session(cluster):
    victim = next(n for n in (1, 2, 3) if n != cluster.controller_id())
    cluster.kill(victim)
    cluster.restart(victim)  # its old /brokers/ids znode lives until ZooKeeper expires the killed session
    cluster.wait_until(lambda: cluster.broker(victim).process.poll() is None and victim in cluster.registered_brokers(),
                       WAIT_S, "the restarted broker registered")
    assert "waiting for that session to expire" in cluster.broker(victim).log_text()


def test_a_partition_reassignment_moves_a_replica_with_its_records(cluster):
    topic = f"move-{uuid.uuid4().hex[:6]}"
    admin = admin_client(cluster)
    try:
        admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=2)])
        cluster.wait_until(lambda: same_view_everywhere(cluster, topic, 1, [1, 2, 3]), WAIT_S, "the topic everywhere")
        original = json.loads(cluster.zk().get(f"/brokers/topics/{topic}")[0])["partitions"]["0"]
        newcomer = next(n for n in (1, 2, 3) if n not in original)
        leaving = original[1]
        target = [original[0], newcomer]
        producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
        for i in range(50):
            producer.produce(topic, value=f"r{i}".encode())
        assert producer.flush(30) == 0

        answers = admin.alter_partition_reassignments({KafkaTopicPartition(topic, 0): target})
        assert list(answers.values()) == [None]
        cluster.wait_until(lambda: not admin.list_partition_reassignments([KafkaTopicPartition(topic, 0)]), WAIT_S,
                           "the reassignment completed")
        assert json.loads(cluster.zk().get(f"/brokers/topics/{topic}")[0])["partitions"]["0"] == target
        cluster.wait_until(lambda: sorted(cluster.partition_state(topic, 0)["isr"]) == sorted(target), WAIT_S,
                           "the ISR of the targets")
        cluster.wait_until(lambda: not cluster.partition_dir(leaving, topic, 0).exists(), WAIT_S,
                           "the leaving replica deleted")
        assert cluster.partition_dir(newcomer, topic, 0).exists()
        cluster.wait_until(lambda: all(partition_views(cluster, topic, n)[0][2] == tuple(sorted(target))
                                       for n in (1, 2, 3)), WAIT_S, "every broker naming the new replicas")
        nothing = admin.alter_partition_reassignments({KafkaTopicPartition(topic, 0): None})
        assert [error.errno for error in nothing.values()] == [NoReassignmentInProgressError.errno]
    finally:
        admin.close()
    # the newcomer has every record: read them from it as the leader
    cluster.broker(original[0]).stop()
    cluster.wait_until(lambda: cluster.leader_of(topic, 0, via=newcomer) == newcomer, WAIT_S, "the newcomer leading")
    assert read_partition_0(cluster, topic, [newcomer], 50) == [f"r{i}".encode() for i in range(50)]


def test_a_topic_deleted_while_a_replica_is_down_is_deleted_there_when_it_returns(cluster):
    topic = created_everywhere(cluster, "gone", 1)
    absent = next(n for n in (1, 2, 3) if n != cluster.controller_id())
    cluster.kill(absent)
    cluster.wait_until(lambda: absent not in cluster.registered_brokers(), WAIT_S, "the broker's session expired")
    # kafka-python's admin asks any broker that Metadata lists for the controller and does not retry a refused
    # connection: wait until the controller's update has told every live broker that the absent one is gone.
    cluster.wait_until(lambda: all(absent not in {b.node_id for b in cluster.metadata(via=n).brokers}
                                   for n in cluster.alive()), WAIT_S, "the absent broker gone from every Metadata")
    admin = admin_client(cluster)
    try:
        admin.delete_topics([topic])
    finally:
        admin.close()
    cluster.wait_until(lambda: all(not partition_views(cluster, topic, n) for n in cluster.alive()), WAIT_S,
                       "the topic gone from the live brokers' metadata")
    assert cluster.zk().exists(f"/admin/delete_topics/{topic}")  # waiting for the absent replica
    assert cluster.partition_dir(absent, topic, 0).exists()
    cluster.restart(absent)
    cluster.wait_until(lambda: not cluster.zk().exists(f"/brokers/topics/{topic}"), WAIT_S, "the deletion completed")
    cluster.wait_until(lambda: not cluster.partition_dir(absent, topic, 0).exists(), WAIT_S,
                       "the returning broker's replica deleted")
    assert not partition_views(cluster, topic, absent)


def test_a_topic_created_with_a_manual_assignment_keeps_it(cluster):
    topic = f"manual-{uuid.uuid4().hex[:6]}"
    admin = admin_client(cluster)
    try:
        admin.create_topics({topic: {"assignments": {0: [3, 1], 1: [2, 3]}}})
        cluster.wait_until(lambda: same_view_everywhere(cluster, topic, 2, [1, 2, 3]), WAIT_S, "the topic everywhere")
        assert json.loads(cluster.zk().get(f"/brokers/topics/{topic}")[0])["partitions"] == {"0": [3, 1], "1": [2, 3]}
        assert [cluster.partition_state(topic, p)["leader"] for p in (0, 1)] == [3, 2]
        refused = admin.create_topics({f"{topic}-x": {"assignments": {0: [1, 9]}}}, raise_errors=False)
        assert [t["error_code"] for t in refused["topics"]] == [InvalidReplicationAssignmentError.errno]
        admin.create_partitions({topic: NewPartitions(total_count=3, new_assignments=[[1, 2]])})
        cluster.wait_until(lambda: same_view_everywhere(cluster, topic, 3, [1, 2, 3]), WAIT_S, "the new partition")
        assert json.loads(cluster.zk().get(f"/brokers/topics/{topic}")[0])["partitions"]["2"] == [1, 2]
    finally:
        admin.close()


def test_unclean_leader_election_follows_the_topic_config(cluster):
    a, b = [n for n in (1, 2, 3) if n != cluster.controller_id()]
    unclean, clean = f"unclean-{uuid.uuid4().hex[:6]}", f"clean-{uuid.uuid4().hex[:6]}"
    admin = admin_client(cluster)
    try:
        admin.create_topics({unclean: {"assignments": {0: [a, b]},
                                       "configs": {"unclean.leader.election.enable": "true"}},
                             clean: {"assignments": {0: [a, b]}}})
    finally:
        admin.close()
    for topic in (unclean, clean):
        cluster.wait_until(lambda t=topic: same_view_everywhere(cluster, t, 1, [1, 2, 3]), WAIT_S, f"{topic} ready")
    cluster.kill(b)
    cluster.wait_until(lambda: all(cluster.partition_state(t, 0)["isr"] == [a] for t in (unclean, clean)), WAIT_S,
                       "the follower out of both ISRs")
    cluster.kill(a)  # the last in-sync replica: both partitions go offline
    cluster.wait_until(lambda: all(cluster.partition_state(t, 0)["leader"] == -1 for t in (unclean, clean)), WAIT_S,
                       "both partitions offline")
    cluster.restart(b)  # live, but not in sync
    cluster.wait_until(lambda: cluster.partition_state(unclean, 0)["leader"] == b, WAIT_S,
                       "the out-of-sync replica elected where the topic allows it")
    state = cluster.partition_state(unclean, 0)
    assert state["isr"] == [b]
    assert cluster.partition_state(clean, 0)["leader"] == -1  # unclean.leader.election.enable=false: stays offline
    assert cluster.partition_state(clean, 0)["isr"] == [a]


def test_controller_apis_on_the_wire(cluster):
    topic = created_everywhere(cluster, "wire", 1)
    controller = cluster.controller_id()
    other = next(n for n in (1, 2, 3) if n != controller)
    state = cluster.partition_state(topic, 0)
    topic_id = next(t.topic_id for t in cluster.metadata([topic], via=controller).topics)

    leader_epoch_in_zookeeper = cluster.zk().get(f"/brokers/ids/{state['leader']}")[1].czxid

    def alter_partition(via: int, leader_epoch: int, partition_epoch: int, isr: list[int],
                        broker_epoch: int = leader_epoch_in_zookeeper):
        with RawClient(cluster.broker(via).bootstrap) as client:
            return client.request(56, 2, broker_id=state["leader"], broker_epoch=broker_epoch, topics=[
                AlterPartitionRequest.TopicData(topic_id=topic_id, partitions=[AlterPartitionRequest.PartitionData(
                    partition_index=0, leader_epoch=leader_epoch, new_isr=isr, partition_epoch=partition_epoch)])])

    with RawClient(cluster.broker(other).bootstrap) as client:
        advertised = {key.api_key for key in client.request(18, 3).api_keys}
        assert not advertised & {4, 5, 6, 7, 56}  # inter-broker APIs are served, not advertised
        assert client.request(7, 3, broker_id=other, broker_epoch=-1).error_code == ErrorCode.NOT_CONTROLLER
    assert alter_partition(other, state["leader_epoch"], state["partition_epoch"], state["isr"]).error_code == \
        ErrorCode.NOT_CONTROLLER

    def partition_error(response) -> int:
        assert response.error_code == ErrorCode.NONE
        return response.topics[0].partitions[0].error_code

    for stale in (leader_epoch_in_zookeeper - 1, -1):  # a previous life of the leader's broker, or no epoch
        refused = alter_partition(controller, state["leader_epoch"], state["partition_epoch"], state["isr"], stale)
        assert refused.error_code == ErrorCode.STALE_BROKER_EPOCH
    stale_leader_epoch = alter_partition(controller, state["leader_epoch"] - 1, state["partition_epoch"], [1, 2])
    assert partition_error(stale_leader_epoch) == ErrorCode.FENCED_LEADER_EPOCH
    same = alter_partition(controller, state["leader_epoch"], state["partition_epoch"], state["isr"])
    assert partition_error(same) == ErrorCode.NONE  # already the state: answered as it is
    assert same.topics[0].partitions[0].partition_epoch == state["partition_epoch"]


def test_a_chroot_in_zookeeper_connect_is_created_and_used(tmp_path):
    zookeeper = ZooKeeperServer(data_dir=tmp_path / "zookeeper").start()
    broker = BrokerProcess(tmp_path / "broker", {"zookeeper.connect": f"{zookeeper.connect_string}/wb/one",
                                                 **SETTINGS})
    root = KazooClient(hosts=zookeeper.connect_string, timeout=10)
    try:
        broker.start()
        root.start(timeout=10)
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=30000)
        try:
            admin.create_topics([NewTopic("rooted", num_partitions=1, replication_factor=1)])
        finally:
            admin.close()
        assert root.exists("/wb/one/brokers/ids/0")
        assert root.exists("/wb/one/brokers/topics/rooted")
        assert json.loads(root.get("/wb/one/controller")[0])["brokerid"] == 0
        assert not root.exists("/brokers")
    finally:
        root.stop()
        root.close()
        broker.kill()
        zookeeper.stop()


def test_a_topic_written_and_marked_for_deletion_at_once_is_deleted(cluster):
    topic = f"blink-{uuid.uuid4().hex[:6]}"
    zk = cluster.zk()
    transaction = zk.transaction()  # as an external tool could: the assignment and the deletion request together
    transaction.create(f"/brokers/topics/{topic}", b'{"version":3,"partitions":{"0":[1,2,3]}}')
    transaction.create(f"/admin/delete_topics/{topic}", b"")
    assert not any(isinstance(result, Exception) for result in transaction.commit())
    cluster.wait_until(lambda: not zk.exists(f"/brokers/topics/{topic}") and not zk.exists(
        f"/admin/delete_topics/{topic}"), WAIT_S, "the topic and its deletion request gone")


def test_a_reassignment_that_cannot_catch_up_is_listed_and_cancelled(cluster):
    a, b, c = 1, 2, 3
    topic = f"cancel-{uuid.uuid4().hex[:6]}"
    tp = KafkaTopicPartition(topic, 0)
    admin = admin_client(cluster)
    try:
        admin.create_topics({topic: {"assignments": {0: [a, b]}}})
        cluster.wait_until(lambda: same_view_everywhere(cluster, topic, 1, [1, 2, 3]), WAIT_S, "the topic everywhere")
        cluster.pause(c)  # still registered until its session expires, but it cannot fetch
        assert list(admin.alter_partition_reassignments({tp: [a, c]}).values()) == [None]
        assert admin.list_partition_reassignments([tp]) == {
            tp: {"replicas": [a, c, b], "adding_replicas": [c], "removing_replicas": [b]}}
        assert json.loads(cluster.zk().get(f"/brokers/topics/{topic}")[0])["adding_replicas"] == {"0": [c]}

        assert list(admin.alter_partition_reassignments({tp: None}).values()) == [None]  # cancel
        assert admin.list_partition_reassignments([tp]) == {}
        stored = json.loads(cluster.zk().get(f"/brokers/topics/{topic}")[0])
        assert (stored["partitions"]["0"], stored["adding_replicas"]) == ([a, b], {})
    finally:
        admin.close()
        cluster.resume(c)
