"""Issue 11's reliability scenarios on three brokers and a ZooKeeper (ClusterProcess), with real clients.

(a) leader kill -9 rounds under idempotent acks=all producers (confluent-kafka and Java kafka-clients): 0 acknowledged
    records lost, 0 duplicates, order kept per partition; failover time (kill -> first acknowledgement on the new
    leader) printed as p50/p99;
(b) both followers SIGSTOPped: acks=all gets NOT_ENOUGH_REPLICAS or times out, nothing acknowledged is lost, the
    ISR grows back after SIGCONT and producing resumes;
(c) a divergent tail (a leader's acks=1 writes no follower has) is truncated when it returns as a follower: every
    replica's segment files end byte-identical;
(d) the controller paused past its ZooKeeper session: another broker becomes controller, the old one's epoch is
    refused, and every broker names one leader per partition and leader epoch;
(e) a consumer group across the loss of its coordinator's broker: committed offsets intact, the group rebalances.

Sizes: WIREBROKER_RELIABILITY=full (`make reliability`) runs the issue's sizes (20 leader kills); the default is
reduced (3 kills) to keep `make test` inside CI's budget.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import pytest
from confluent_kafka import (
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.batch_dump import duplicate_batches
from tests.integration.cluster_process import ClusterProcess
from tests.integration.failover_workload import (
    JavaProducer,
    SteadyProducer,
    failover_seconds,
    judge,
    percentile,
    read_all,
)
from tests.integration.raw_client import RawClient
from wirebroker.protocol import records
from wirebroker.protocol.errors import ErrorCode


@dataclass(frozen=True)
class Size:
    name: str
    leader_kills: int
    rate: int  # records a second, per producer


SIZES = {"reduced": Size("reduced", leader_kills=3, rate=40), "full": Size("full", leader_kills=20, rate=100)}
SIZE = SIZES[os.environ.get("WIREBROKER_RELIABILITY", "reduced")]
# A follower that stops fetching leaves the ISR after this (Kafka: 30 s): shorter than the followers-stopped pause,
# far longer than the divergent-tail one.
SETTINGS = {"replica.lag.time.max.ms": "10000"}
REPLICA_FETCH_WAIT_MAX_MS = 500  # Kafka's default, the brokers' too
LEADER_CHANGE_TIMEOUT_S = 60
PRODUCE, LEADER_AND_ISR, OFFSET_FETCH, FIND_COORDINATOR = 0, 4, 9, 10


@pytest.fixture(params=[SIZE], ids=lambda size: size.name)
def size(request) -> Size:
    return request.param


def create_topic(cluster: ClusterProcess, topic: str, partitions: int) -> None:
    """CreateTopics through confluent-kafka's AdminClient, then wait for leaders and full ISRs."""
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    try:
        admin.create_topics([NewTopic(topic, partitions, 3)])[topic].result(30)
    except (KafkaException, TimeoutError) as exc:
        raise AssertionError(f"CreateTopics {topic} failed ({exc!r}); topics in ZooKeeper: "
                             f"{cluster.zk().get_children('/brokers/topics')}, controller {cluster.controller_id()}"
                             ) from exc
    wait_for_full_isr(cluster, topic, partitions)


def wait_for_full_isr(cluster: ClusterProcess, topic: str, partitions: int) -> None:
    """Every partition has a leader that Metadata names and all three replicas in its ISR (in ZooKeeper)."""
    def full() -> bool:
        states = [cluster.partition_state(topic, p) for p in range(partitions)]
        return all(s is not None and len(s["isr"]) == 3 for s in states) and all(
            cluster.leader_of(topic, p) == states[p]["leader"] for p in range(partitions))
    cluster.wait_until(full, LEADER_CHANGE_TIMEOUT_S, f"{topic}: a leader and three in-sync replicas per partition")


def produce_all(bootstrap: str, topic: str, values: list[str], **config) -> list[tuple[str, KafkaError | None]]:
    """Produce values to partition 0 and flush; each value with its delivery error (None: acknowledged)."""
    producer = Producer({"bootstrap.servers": bootstrap, **config})
    results: list[tuple[str, KafkaError | None]] = []
    for value in values:
        producer.produce(topic, value.encode(), partition=0,
                         on_delivery=lambda err, msg: results.append((msg.value().decode(), err)))
    producer.flush(120)
    return results


def acked(results: list[tuple[str, KafkaError | None]]) -> list[str]:
    return [value for value, error in results if error is None]


# ---- (a) leader kill -9 rounds ----------------------------------------------------------------------------------


def test_leader_kill_rounds_lose_no_acknowledged_record(tmp_path, size, capsys):
    from compat_tests.reference_kafka import install_jars

    topic, partitions = "failover", 3
    jars = install_jars()
    with ClusterProcess(tmp_path, overrides=SETTINGS) as cluster:
        create_topic(cluster, topic, partitions)
        producer = SteadyProducer("c", cluster.bootstrap, topic, partitions, size.rate).start()
        with JavaProducer(jars, tmp_path, cluster.bootstrap, topic, size.rate) as java:
            cluster.wait_until(java.acknowledged_any, 60, "the Java producer's first acknowledgement")
            samples: list[float] = []
            elections: list[float] = []  # kill -> the new leader in ZooKeeper (the session timeout, then the election)
            for round_number in range(1, size.leader_kills + 1):
                wait_for_full_isr(cluster, topic, partitions)
                victim = cluster.leader_of(topic, 0)
                led = {p for p in range(partitions) if cluster.leader_of(topic, p) == victim}
                cluster.kill(victim)
                killed_at = time.time()
                elected_at = cluster.wait_until(
                    lambda v=victim: cluster.partition_state(topic, 0)["leader"] not in (v, -1) and time.time(),
                    LEADER_CHANGE_TIMEOUT_S, f"round {round_number}: a leader of {topic}-0 other than {victim}")
                elections.append(elected_at - killed_at)
                cluster.wait_until(lambda led=led, killed_at=killed_at: len(
                                       failover_seconds(list(producer.log.acks), led, killed_at)) == len(led),
                                   LEADER_CHANGE_TIMEOUT_S,
                                   f"round {round_number}: acknowledgements on partitions {sorted(led)} after broker "
                                   f"{victim} was killed")
                samples += failover_seconds(list(producer.log.acks), led, killed_at)
                cluster.restart(victim)
            wait_for_full_isr(cluster, topic, partitions)
            log, java_log = producer.stop(), java.stop()
            acks = log.acks + java_log.acks
        verdict = judge(acks, read_all(cluster.bootstrap, topic, partitions),
                        dump=lambda values: duplicate_batches(cluster, topic, partitions, values))
    assert log.errors == [] and java_log.errors == [], (log.errors[:5], java_log.errors[:5])
    assert java_log.acks, f"the Java producer acknowledged nothing: {java.stderr_path.read_text()[-2000:]}"
    assert not verdict.problems(), verdict.problems()
    with capsys.disabled():
        print(f"\nfailover ({size.name}: {size.leader_kills} leader kills, {len(acks)} acknowledged records, "
              f"0 lost, 0 duplicated): kill -> first acknowledgement on the new leader p50 "
              f"{percentile(samples, 0.5):.2f} s, p99 {percentile(samples, 0.99):.2f} s over {len(samples)} "
              f"partition failovers; kill -> new leader in ZooKeeper p50 {percentile(elections, 0.5):.2f} s, "
              f"p99 {percentile(elections, 0.99):.2f} s (zookeeper.session.timeout.ms "
              f"{cluster.overrides['zookeeper.session.timeout.ms']}, replica.lag.time.max.ms "
              f"{cluster.overrides['replica.lag.time.max.ms']})")


# ---- (b) both followers stopped ---------------------------------------------------------------------------------


def test_both_followers_stopped_refuses_acks_all_and_recovers(tmp_path):
    topic = "isr"
    with ClusterProcess(tmp_path, overrides=SETTINGS) as cluster:
        create_topic(cluster, topic, 1)
        leader = cluster.leader_of(topic, 0)
        followers = [n for n in cluster.node_ids if n != leader]
        producer = SteadyProducer("steady", cluster.bootstrap, topic, 1, rate=10).start()
        cluster.wait_until(lambda: len(producer.log.acks) >= 10, 30, "acknowledgements before the pause")
        for follower in followers:
            cluster.pause(follower)
        paused_at = time.time()
        # The ISR shrinks to the leader alone (lag, or the followers' sessions expiring); from then on a produce is
        # refused before the append.
        cluster.wait_until(lambda: cluster.partition_state(topic, 0)["isr"] == [leader], 60,
                           f"the ISR of {topic}-0 shrunk to its leader {leader}")
        probe = produce_all(cluster.broker(leader).bootstrap, topic, [f"probe:{i}" for i in range(5)],
                            acks="all", retries=0, **{"message.timeout.ms": 20_000})
        refused_codes = {KafkaError.NOT_ENOUGH_REPLICAS, KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                         KafkaError._MSG_TIMED_OUT, KafkaError.REQUEST_TIMED_OUT}
        assert all(error is not None and error.code() in refused_codes for _, error in probe), probe
        assert any(error.code() == KafkaError.NOT_ENOUGH_REPLICAS for _, error in probe), probe
        acked_while_paused = [a for a in list(producer.log.acks) if a.sent_at > paused_at]
        assert acked_while_paused == [], f"acknowledged with one in-sync replica: {acked_while_paused[:3]}"
        for follower in followers:
            cluster.resume(follower)
        resumed_at = time.time()
        cluster.wait_until(lambda: sorted(cluster.partition_state(topic, 0)["isr"]) == [1, 2, 3], 60,
                           f"the ISR of {topic}-0 grown back to three replicas")
        cluster.wait_until(lambda: any(a.acked_at > resumed_at for a in list(producer.log.acks)), 60,
                           "an acknowledgement after SIGCONT")
        log = producer.stop()
        verdict = judge(log.acks, [r for r in read_all(cluster.bootstrap, topic, 1) if r.value.startswith("steady")],
                        dump=lambda values: duplicate_batches(cluster, topic, 1, values))
    assert log.errors == []
    assert not verdict.problems(), verdict.problems()


# ---- (c) a divergent tail ---------------------------------------------------------------------------------------


def segment_files(cluster: ClusterProcess, node_id: int, topic: str) -> dict[str, bytes]:
    directory = cluster.partition_dir(node_id, topic, 0)
    return {path.name: path.read_bytes() for path in sorted(directory.glob("*.log"))}


def identical_segments(cluster: ClusterProcess, topic: str) -> bool:
    files = {n: segment_files(cluster, n, topic) for n in cluster.node_ids}
    if len({repr(f) for f in files.values()}) == 1:
        return True
    raise AssertionError(f"segment sizes: { {n: {name: len(b) for name, b in f.items()} for n, f in files.items()} }")


def test_a_divergent_tail_is_truncated_and_replicas_end_byte_identical(tmp_path):
    topic = "diverge"
    # The longest session ZooKeeper allows here (20 ticks of 500 ms): on a loaded machine the followers' pause must
    # never outlast their sessions, or the controller would shrink the ISR to the leader that is then killed.
    with ClusterProcess(tmp_path, overrides={**SETTINGS, "zookeeper.session.timeout.ms": "10000"}) as cluster:
        create_topic(cluster, topic, 1)
        committed = acked(produce_all(cluster.bootstrap, topic, [f"base:{i}" for i in range(50)], acks="all"))
        assert len(committed) == 50
        leader = cluster.leader_of(topic, 0)
        epoch = cluster.partition_state(topic, 0)["leader_epoch"]
        followers = [n for n in cluster.node_ids if n != leader]
        # Followers paused for a moment (shorter than their sessions and the ISR lag time): the leader alone takes
        # acks=1 writes, then dies with them. A follower's fetch already waiting at the leader would still carry the
        # writes into the paused follower's socket: the pause outlasts replica.fetch.wait.max.ms first, so those
        # fetches are answered empty.
        for follower in followers:
            cluster.pause(follower)
        time.sleep(3 * REPLICA_FETCH_WAIT_MAX_MS / 1000)
        tail = acked(produce_all(cluster.broker(leader).bootstrap, topic, [f"tail:{i}" for i in range(10)], acks=1))
        cluster.kill(leader)
        for follower in followers:
            cluster.resume(follower)
        assert len(tail) == 10, "the leader did not take the acks=1 writes"
        cluster.wait_until(lambda: cluster.partition_state(topic, 0)["leader"] in followers
                           and cluster.partition_state(topic, 0)["leader_epoch"] > epoch, LEADER_CHANGE_TIMEOUT_S,
                           f"a follower elected leader of {topic}-0 after broker {leader} was killed")
        after = acked(produce_all(",".join(cluster.broker(n).bootstrap for n in followers), topic,
                                  [f"after:{i}" for i in range(30)], acks="all", **{"enable.idempotence": True}))
        assert len(after) == 30
        cluster.restart(leader)
        wait_for_full_isr(cluster, topic, 1)
        cluster.wait_until(lambda: identical_segments(cluster, topic), 60,
                           f"the segment files of {topic}-0 identical on brokers 1, 2, 3")
        values = [r.value for r in read_all(cluster.bootstrap, topic, 1)]
    assert values == committed + after  # the divergent tail is gone everywhere, nothing committed is


# ---- (d) the controller paused past its ZooKeeper session -------------------------------------------------------


def test_a_paused_controller_is_replaced_and_its_epoch_refused(tmp_path):
    from wirebroker.protocol.messages.produce import ProduceRequest as P

    topic, partitions = "fenced", 3
    with ClusterProcess(tmp_path, overrides=SETTINGS) as cluster:
        create_topic(cluster, topic, partitions)
        old = cluster.controller_id()
        old_epoch = cluster.controller_epoch()
        cluster.pause(old)
        new = cluster.wait_until(lambda: cluster.controller_id() not in (None, old) and cluster.controller_id(), 60,
                                 f"a controller other than the paused broker {old}")
        new_epoch = cluster.controller_epoch()
        assert new_epoch > old_epoch
        cluster.wait_until(lambda: all(cluster.leader_of(topic, p) not in (-1, old) for p in range(partitions)),
                           LEADER_CHANGE_TIMEOUT_S, f"every partition of {topic} led by a broker other than {old}")
        before_resume = {p: cluster.partition_state(topic, p) for p in range(partitions)}
        cluster.resume(old)
        cluster.wait_until(lambda: old in cluster.registered_brokers(), 60, f"broker {old} registered again")
        for p in range(partitions):  # whatever the old controller wrote after it woke, it did not change state
            state = cluster.partition_state(topic, p)
            if state["partition_epoch"] != before_resume[p]["partition_epoch"]:
                assert state["controller_epoch"] >= new_epoch, (p, before_resume[p], state)
        assert cluster.controller_id() == new and cluster.controller_epoch() == new_epoch
        # A request in the old controller's epoch is refused by every broker that has heard from the new one (the
        # resumed broker learns the new epoch from the new controller's UpdateMetadata, a moment after it registers).
        cluster.wait_until(lambda: all(cluster.metadata([], via=n).controller_id == new for n in cluster.node_ids), 60,
                           f"every broker naming controller {new}")
        for node_id in cluster.node_ids:
            with RawClient(cluster.broker(node_id).bootstrap) as client:
                stale = client.request(LEADER_AND_ISR, 6, controller_id=old, controller_epoch=old_epoch,
                                       broker_epoch=-1, type=0, topic_states=[], live_leaders=[])
            assert stale.error_code == ErrorCode.STALE_CONTROLLER_EPOCH, (node_id, stale)

        # One leader per partition and leader epoch: every broker names ZooKeeper's, the others refuse writes.
        def agreed() -> bool:
            for p in range(partitions):
                state = cluster.partition_state(topic, p)
                for node_id in cluster.node_ids:
                    named = [q for t in cluster.metadata([topic], via=node_id).topics for q in t.partitions
                             if q.partition_index == p]
                    if not named or (named[0].leader_id, named[0].leader_epoch) != (state["leader"],
                                                                                    state["leader_epoch"]):
                        return False
            return True
        cluster.wait_until(agreed, 60, "every broker naming ZooKeeper's leader and leader epoch")
        batch = records.build_batch([(int(time.time() * 1000), None, b"stale write", [])])
        for p in range(partitions):
            leader = cluster.partition_state(topic, p)["leader"]
            for node_id in (n for n in cluster.node_ids if n != leader):
                with RawClient(cluster.broker(node_id).bootstrap) as client:
                    response = client.request(PRODUCE, 9, acks=-1, timeout_ms=5000, topic_data=[P.TopicProduceData(
                        name=topic, partition_data=[P.PartitionProduceData(index=p, records=batch)])])
                code = response.responses[0].partition_responses[0].error_code
                assert code == ErrorCode.NOT_LEADER_OR_FOLLOWER, (p, node_id, code)


# ---- (e) a consumer group across the loss of its coordinator ----------------------------------------------------


def find_coordinator(cluster: ClusterProcess, group: str) -> int:
    for node_id in cluster.alive():
        with RawClient(cluster.broker(node_id).bootstrap) as client:
            response = client.request(FIND_COORDINATOR, 3, key=group, key_type=0)
        if response.error_code == ErrorCode.NONE:
            return response.node_id
    return -1


def test_a_consumer_group_survives_the_loss_of_its_coordinator(tmp_path):
    topic, partitions, group, count = "grouped", 3, "survivors", 90
    with ClusterProcess(tmp_path, overrides=SETTINGS) as cluster:
        create_topic(cluster, topic, partitions)
        producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "enable.idempotence": True})
        for i in range(count):
            producer.produce(topic, f"r:{i}".encode(), partition=i % partitions)
        assert producer.flush(60) == 0

        def consumer() -> Consumer:
            return Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group, "enable.auto.commit": False,
                             "auto.offset.reset": "earliest", "session.timeout.ms": 10_000,
                             "heartbeat.interval.ms": 1000})

        first = consumer()
        first.subscribe([topic])
        consumed: list[str] = []
        cluster.wait_until(lambda: consumed.extend(_poll_values(first, count // 2 - len(consumed)))
                           or len(consumed) >= count // 2, 60, "half the records consumed")
        first.commit(asynchronous=False)
        committed = {tp.partition: tp.offset for tp in first.committed(
            [TopicPartition(topic, p) for p in range(partitions)], timeout=10)}
        assert sum(max(o, 0) for o in committed.values()) == len(consumed)
        coordinator = find_coordinator(cluster, group)
        assert coordinator in cluster.node_ids
        assert all(offset_fetch_error(cluster, node_id, group) == ErrorCode.NOT_COORDINATOR
                   for node_id in cluster.node_ids if node_id != coordinator)  # only the partition leader serves it
        cluster.kill(coordinator)
        cluster.wait_until(lambda: find_coordinator(cluster, group) not in (-1, coordinator), LEADER_CHANGE_TIMEOUT_S,
                           f"a coordinator for {group} other than the killed broker {coordinator}")
        second = consumer()
        second.subscribe([topic])
        remaining = list(consumed)

        def rebalanced_and_done() -> bool:
            remaining.extend(_poll_values(first) + _poll_values(second))
            return bool(first.assignment()) and bool(second.assignment()) and len(set(remaining)) == count
        cluster.wait_until(rebalanced_and_done, 90, "the group rebalanced over two members and read every record")
        checker = consumer()
        after = {tp.partition: tp.offset for tp in checker.committed(
            [TopicPartition(topic, p) for p in range(partitions)], timeout=10)}
        for member in (first, second, checker):
            member.close()
    assert after == committed  # nothing committed since: the new coordinator loaded the offsets from the log
    assert sorted(set(remaining)) == sorted(f"r:{i}" for i in range(count))


def offset_fetch_error(cluster: ClusterProcess, node_id: int, group: str) -> int:
    with RawClient(cluster.broker(node_id).bootstrap) as client:
        return client.request(OFFSET_FETCH, 5, group_id=group, topics=None).error_code


def _poll_values(consumer: Consumer, limit: int = 50) -> list[str]:
    return [m.value().decode() for m in consumer.consume(limit, timeout=0.5) if m.error() is None]
