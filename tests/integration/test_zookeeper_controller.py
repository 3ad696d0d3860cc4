"""The ZooKeeper controller's building blocks against a real ZooKeeper (Debian's package, started on a free port):
broker registration across a session expiry, controller election and failover with the epoch bumped each time,
the refusal of a stale controller's writes, and the controller's leader/ISR changes as they land in ZooKeeper."""

from __future__ import annotations

import json
import queue
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from kazoo.client import KazooClient

from wirebroker.cluster.zk import paths
from wirebroker.cluster.zk.assignment import assign_replicas_to_brokers
from wirebroker.cluster.zk.brokers import (
    BrokerIdInUseError,
    BrokerRegistration,
    ensure_persistent_paths,
    get_live_brokers,
    get_or_create_cluster_id,
    register_broker,
)
from wirebroker.cluster.zk.controller_election import (
    ControllerElector,
    get_controller_epoch,
    get_controller_id,
    register_controller_and_increment_epoch,
)
from wirebroker.cluster.zk.controller_state import ControllerState
from wirebroker.cluster.zk.data import (
    NO_LEADER,
    BrokerInfo,
    EndPoint,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicAssignment,
    decode_isr_change_notification,
)
from wirebroker.cluster.zk.errors import ControllerMovedError
from wirebroker.cluster.zk.partition_state import (
    create_isr_change_notification,
    get_partition_states,
    update_leader_and_isr,
)
from wirebroker.cluster.zk.topics import (
    create_topic,
    delete_topic_znodes,
    get_all_topics,
    get_topic_assignment,
    get_topic_config,
    mark_topic_for_deletion,
    set_topic_assignment,
)
from wirebroker.cluster.zookeeper_server import ZooKeeperNotInstalledError, ZooKeeperServer, four_letter_word
from wirebroker.log.files import TopicPartition
from wirebroker.protocol.errors import TopicAlreadyExistsError

TICK_TIME_MS = 200  # sessions of 0.4 to 4 s: expiries in tests take moments
WAIT_S = 15


@pytest.fixture(scope="session")
def zookeeper() -> Iterator[ZooKeeperServer]:
    try:
        server = ZooKeeperServer(tick_time_ms=TICK_TIME_MS).start()
    except ZooKeeperNotInstalledError as exc:
        pytest.fail(f"these tests need a real ZooKeeper: {exc}")
    yield server
    server.stop()


@pytest.fixture
def connect(zookeeper) -> Iterator[Callable[[], KazooClient]]:
    """Kazoo clients (one per simulated broker) chrooted to a fresh namespace, so tests never see each other."""
    chroot = f"/test-{uuid.uuid4().hex[:8]}"
    root = KazooClient(hosts=zookeeper.connect_string)
    root.start(timeout=WAIT_S)
    root.ensure_path(chroot)
    root.stop()
    root.close()
    clients: list[KazooClient] = []

    def new_client() -> KazooClient:
        client = KazooClient(hosts=zookeeper.connect_string + chroot, timeout=4)
        client.start(timeout=WAIT_S)
        clients.append(client)
        return client

    yield new_client
    for client in clients:
        client.stop()
        client.close()


def expire_session(zookeeper: ZooKeeperServer, client: KazooClient) -> None:
    """End a client's session as a long pause would: a twin connection with its session id closes it (the kazoo
    and ZooKeeper test suites' technique); the client then gets SESSION_EXPIRED and opens a new session."""
    twin = KazooClient(hosts=zookeeper.connect_string, client_id=client.client_id)
    twin.start(timeout=WAIT_S)
    twin.stop()
    twin.close()


def wait_until(condition: Callable[[], object], what: str) -> object:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {WAIT_S}s waiting for {what}")


def broker_info(broker_id: int, rack: str | None = None) -> BrokerInfo:
    return BrokerInfo(broker_id, (EndPoint("PLAINTEXT", "127.0.0.1", 9091 + broker_id),), rack)


def test_server_answers_four_letter_words(zookeeper):
    assert four_letter_word(zookeeper.port, "ruok") == "imok"
    assert "Mode: standalone" in four_letter_word(zookeeper.port, "srvr")


def test_broker_registration_is_kafkas_json_and_survives_session_expiry(zookeeper, connect):
    broker, observer = connect(), connect()
    ensure_persistent_paths(broker)
    registration = BrokerRegistration(broker, broker_info(1, rack="r1"))
    first_epoch = registration.start()
    value = json.loads(observer.get(paths.broker(1))[0])
    assert value["version"] == 5
    assert value["endpoints"] == ["PLAINTEXT://127.0.0.1:9092"]
    assert (value["host"], value["port"], value["rack"]) == ("127.0.0.1", 9092, "r1")
    assert value["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT"}
    with pytest.raises(BrokerIdInUseError, match="broker.id=1"):
        register_broker(observer, broker_info(1))

    expire_session(zookeeper, broker)
    wait_until(lambda: registration.broker_epoch > first_epoch, "the broker to re-register in a new session")
    stat = observer.exists(paths.broker(1))
    assert stat is not None and stat.czxid == registration.broker_epoch
    assert stat.ephemeralOwner == broker.client_id[0]
    assert list(get_live_brokers(observer)) == [1]
    registration.stop()


def test_cluster_id_is_the_first_brokers(connect):
    first, second = connect(), connect()
    assert get_or_create_cluster_id(first, "clusterA") == "clusterA"
    assert get_or_create_cluster_id(second, "clusterB") == "clusterA"


def test_controller_failover_bumps_the_epoch(connect):
    elected: queue.Queue[tuple[int, int]] = queue.Queue()
    resigned: queue.Queue[int] = queue.Queue()
    clients = {broker_id: connect() for broker_id in (1, 2, 3)}
    electors = {
        broker_id: ControllerElector(client, broker_id, lambda epoch, _version, b=broker_id: elected.put((b, epoch)),
                                     lambda b=broker_id: resigned.put(b))
        for broker_id, client in clients.items()
    }
    for elector in electors.values():
        elector.start()
    observer = connect()
    epochs = []
    for _ in range(3):
        winner, epoch = elected.get(timeout=WAIT_S)
        epochs.append(epoch)
        assert get_controller_id(observer) == winner
        assert electors[winner].active and electors[winner].epoch == epoch
        assert [b for b, e in electors.items() if e.active] == [winner]
        assert get_controller_epoch(observer)[0] == epoch
        assert observer.get(paths.CONTROLLER_EPOCH)[0] == str(epoch).encode()
        clients[winner].stop()  # closes the session: its ephemeral /controller goes at once
    assert epochs == [1, 2, 3]
    assert elected.empty()


def test_controller_resigns_when_its_session_expires(zookeeper, connect):
    resigned: queue.Queue[int] = queue.Queue()
    client, observer = connect(), connect()
    elector = ControllerElector(client, 1, lambda epoch, version: None, lambda: resigned.put(1))
    elector.start()
    wait_until(lambda: elector.active, "broker 1 to become controller")
    assert elector.epoch == 1
    expire_session(zookeeper, client)
    assert resigned.get(timeout=WAIT_S) == 1
    # alone in the cluster, it wins again in its new session, one epoch later
    wait_until(lambda: elector.active and elector.epoch == 2, "broker 1 to be re-elected in its new session")
    assert get_controller_epoch(observer)[0] == 2
    elector.stop()
    assert get_controller_id(observer) is None


def test_a_stale_controller_cannot_change_partition_state(zookeeper, connect):
    clients = {broker_id: connect() for broker_id in (1, 2, 3)}
    ensure_persistent_paths(clients[1])
    for broker_id, client in clients.items():
        BrokerRegistration(client, broker_info(broker_id)).start()
    old_epoch, old_epoch_version = register_controller_and_increment_epoch(clients[1], 1)
    create_topic(clients[1], "orders", TopicAssignment(None, {0: ReplicaAssignment((1, 2, 3))}))
    old = ControllerState.load(clients[1], 1, old_epoch, old_epoch_version)
    tp = TopicPartition("orders", 0)
    created = old.on_new_partitions(clients[1], {tp: ReplicaAssignment((1, 2, 3))})
    assert created.written[tp] == LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2, 3)), old_epoch)

    # Broker 1's session ends (a long pause): its /controller goes, broker 2 wins with the next epoch.
    expire_session(zookeeper, clients[1])
    wait_until(lambda: get_controller_id(clients[2]) is None, "the old controller's znode to go")
    new_epoch, new_epoch_version = register_controller_and_increment_epoch(clients[2], 2)
    assert new_epoch == old_epoch + 1
    with pytest.raises(ControllerMovedError):
        register_controller_and_increment_epoch(clients[3], 3)

    # Broker 1 comes back believing it still leads: every partition-state write it tries is refused.
    wait_until(lambda: clients[1].connected, "broker 1 to reconnect in a new session")
    before = clients[3].get(paths.partition_state("orders", 0))
    with pytest.raises(ControllerMovedError) as refused:
        old.on_broker_failure(clients[1], [2])
    assert refused.value.code == 11  # STALE_CONTROLLER_EPOCH
    with pytest.raises(ControllerMovedError):
        update_leader_and_isr(clients[1], {tp: LeaderAndIsr(1, 1, (1,), partition_epoch=0)}, old_epoch,
                              old_epoch_version)
    assert clients[3].get(paths.partition_state("orders", 0)) == before

    # The new controller's view: broker 1 is gone, broker 2 takes the lead with the next leader epoch.
    new = ControllerState.load(clients[2], 2, new_epoch, new_epoch_version)
    result = new.on_broker_failure(clients[2], [1])
    assert result.written[tp] == LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 1, (2, 3), partition_epoch=1), new_epoch)
    assert get_partition_states(clients[3], [tp])[tp] == result.written[tp]


def test_controller_retries_a_partition_whose_epoch_moved(connect):
    controller_client, leader_client = connect(), connect()
    epoch, epoch_version = register_controller_and_increment_epoch(controller_client, 1)
    tp = TopicPartition("t", 0)
    create_topic(controller_client, "t", TopicAssignment(None, {0: ReplicaAssignment((1, 2, 3))}))
    controller = ControllerState(1, epoch, epoch_version, {b: broker_info(b) for b in (1, 2, 3)},
                                 {tp: ReplicaAssignment((1, 2, 3))}, {})
    controller.on_new_partitions(controller_client, {tp: ReplicaAssignment((1, 2, 3))})
    # The leader shrinks its ISR behind the controller's back (as an AlterPartition would): partition epoch 1.
    shrunk = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 3)), epoch).encode()
    leader_client.set(paths.partition_state("t", 0), shrunk, version=0)
    # Broker 1 fails: the decision from the cached ISR [1, 2, 3] loses the race, the fresh one [1, 3] is written.
    result = controller.on_broker_failure(controller_client, [1])
    assert result.written[tp].leader_and_isr == LeaderAndIsr(3, 1, (3,), partition_epoch=2)
    assert not result.failed


def test_controller_flow_through_zookeeper(connect):
    zk = connect()
    ensure_persistent_paths(zk)
    racks = {1: "a", 2: "b", 3: "c"}
    epoch, epoch_version = register_controller_and_increment_epoch(zk, 1)
    controller = ControllerState(1, epoch, epoch_version, {b: broker_info(b, racks[b]) for b in racks}, {}, {})
    replicas = assign_replicas_to_brokers(controller.broker_metadatas(), 3, 3, fixed_start_index=0)
    create_topic(zk, "events", TopicAssignment("AAAAAAAAAAAAAAAAAAAAAA",
                                               {p: ReplicaAssignment(tuple(r)) for p, r in replicas.items()}),
                 {"min.insync.replicas": "2"})
    with pytest.raises(TopicAlreadyExistsError):
        create_topic(zk, "events", TopicAssignment(None, {0: ReplicaAssignment((1,))}))
    assert get_topic_config(zk, "events") == {"min.insync.replicas": "2"}
    tps = [TopicPartition("events", p) for p in range(3)]
    controller.on_new_partitions(zk, {tp: ReplicaAssignment(tuple(replicas[tp.partition])) for tp in tps})
    assert get_topic_assignment(zk, "events").partitions[2] == ReplicaAssignment(tuple(replicas[2]))
    grown = TopicAssignment("AAAAAAAAAAAAAAAAAAAAAA", {**{p: ReplicaAssignment(tuple(r)) for p, r in replicas.items()},
                                                      3: ReplicaAssignment((1, 2, 3))})
    with pytest.raises(ControllerMovedError):  # an older controller's epoch version
        set_topic_assignment(zk, "events", grown, epoch_version - 1)
    set_topic_assignment(zk, "events", grown, epoch_version)
    assert sorted(get_topic_assignment(zk, "events").partitions) == [0, 1, 2, 3]
    notification = create_isr_change_notification(zk, tps[:2])
    assert decode_isr_change_notification(zk.get(notification)[0]) == set(tps[:2])
    assert sorted(s.leader_and_isr.leader for s in get_partition_states(zk, tps).values()) == [1, 2, 3]

    shutdown = controller.on_controlled_shutdown(zk, 1)
    assert not shutdown.failed and controller.partitions_led_by(1) == []
    assert all(1 not in s.leader_and_isr.isr for s in get_partition_states(zk, tps).values())

    failure = controller.on_broker_failure(zk, [1, 2])
    assert failure.offline == []  # broker 3 was in every ISR
    assert {s.leader_and_isr.leader for s in get_partition_states(zk, tps).values()} == {3}
    controller.on_broker_failure(zk, [3])
    offline = get_partition_states(zk, tps)
    assert all(s.leader_and_isr.leader == NO_LEADER and s.leader_and_isr.isr == (3,) for s in offline.values())

    back = controller.on_broker_startup(zk, [broker_info(1, "a")])
    assert back.written == {} and set(back.failed) == set(tps)  # 1 left the ISR: no clean leader
    back = controller.on_broker_startup(zk, [broker_info(3, "c")])
    assert {s.leader_and_isr.leader for s in back.written.values()} == {3}

    mark_topic_for_deletion(zk, "events")
    delete_topic_znodes(zk, "events", epoch_version)
    assert get_all_topics(zk) == [] and get_partition_states(zk, tps) == {}
    assert zk.get_children(paths.DELETE_TOPICS) == []
