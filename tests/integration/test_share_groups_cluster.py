"""Share groups (KIP-932) across a three-broker ZooKeeper cluster, with Java's KafkaShareConsumer: a 3-partition topic
with replication factor 3 whose partition leaders, the share group's coordinator and the share coordinators of its
share-partitions (the leaders of their `__share_group_state` partitions) are different brokers, so every
acknowledgement crosses brokers as Read/Write/InitializeShareGroupState requests. Two members share the records,
each record delivered to one member and acknowledged once; then a broker leading a topic partition and the state of
another share-partition is killed (-9): the new leaders load what the dead broker led, consumption goes on, and no
record acknowledged before the kill comes back. At the end the group's coordinator describes its offsets, gathered
from the share coordinators: every record done.

The default run shares 600 records; WIREBROKER_RELIABILITY=full shares 6,000, and after the first broker is back
kills a second one, the share group's coordinator, while the last third is consumed."""

from __future__ import annotations

import base64
import os
import time
from collections import Counter

from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.cluster_process import ClusterProcess
from tests.integration.raw_client import RawClient
from tests.integration.share_consumers import ShareConsumer, run
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.describe_share_group_offsets import (
    DescribeShareGroupOffsetsRequest,
)

FULL = os.environ.get("WIREBROKER_RELIABILITY") == "full"
RECORDS = 6000 if FULL else 600
TOPIC = "work"
PARTITIONS = 3
FIND_COORDINATOR, GROUP_KEY, SHARE_KEY, DESCRIBE_SHARE_GROUP_OFFSETS, SHARE_GROUP_DESCRIBE = 10, 0, 2, 90, 77
SETTLE_S = 2.0  # after the last record: time for a redelivery, had an acknowledged record come back, to show
BROKER = {"share.coordinator.state.topic.num.partitions": "6", "offsets.topic.num.partitions": "6"}


def _coordinators(cluster: ClusterProcess, keys: list[str], key_type: int) -> dict[str, int]:
    """FindCoordinator for every key, asked of a live broker: key -> node id (those answered without error)."""
    for node_id in cluster.alive():
        try:
            with RawClient(cluster.broker(node_id).bootstrap) as client:
                client.sock.settimeout(10)
                found = client.request(FIND_COORDINATOR, 6, key_type=key_type, coordinator_keys=keys)
        except OSError:
            continue
        return {c.key: c.node_id for c in found.coordinators if c.error_code == ErrorCode.NONE}
    return {}


def _topic_id(cluster: ClusterProcess) -> bytes | None:
    topic_id = cluster.metadata([TOPIC]).topics[0].topic_id
    return topic_id if any(topic_id) else None


def _share_keys(group: str, topic_id: bytes) -> list[str]:
    """Kafka's SharePartitionKey strings: group:topic id (base64, no padding):partition."""
    encoded = base64.urlsafe_b64encode(topic_id).rstrip(b"=").decode()
    return [f"{group}:{encoded}:{p}" for p in range(PARTITIONS)]


class Layout:
    """Where a group's parts live: partition leaders, its coordinator, its share-partitions' coordinators."""

    def __init__(self, cluster: ClusterProcess, group: str, topic_id: bytes) -> None:
        self.cluster, self.group, self.topic_id = cluster, group, topic_id

    def leaders(self) -> list[int]:
        return [self.cluster.leader_of(TOPIC, p) for p in range(PARTITIONS)]

    def share_coordinators(self) -> list[int]:
        keys = _share_keys(self.group, self.topic_id)
        found = _coordinators(self.cluster, keys, SHARE_KEY)
        return [found.get(key, -1) for key in keys]

    def group_coordinator(self) -> int:
        return _coordinators(self.cluster, [self.group], GROUP_KEY).get(self.group, -1)

    def settled_without(self, dead: int) -> bool:
        """Every part has a live owner other than `dead`."""
        owners = [*self.leaders(), *self.share_coordinators(), self.group_coordinator()]
        return all(owner not in (-1, dead) for owner in owners)

    def __repr__(self) -> str:
        return (f"group {self.group}: partition leaders {self.leaders()}, share coordinators "
                f"{self.share_coordinators()}, group coordinator {self.group_coordinator()}")


def _spread_group(cluster: ClusterProcess, topic_id: bytes) -> Layout:
    """A group id whose share-partitions are each persisted by a broker other than their partition's leader, on
    more than one share coordinator (FindCoordinator SHARE creates __share_group_state on the first ask)."""
    candidates = [f"queue-{i}" for i in range(40)]
    keys = [key for group in candidates for key in _share_keys(group, topic_id)]
    found = cluster.wait_until(lambda: (f := _coordinators(cluster, keys, SHARE_KEY)) and len(f) == len(keys) and f,
                               60, "every share coordinator elected")
    leaders = [cluster.leader_of(TOPIC, p) for p in range(PARTITIONS)]
    for group in candidates:
        coordinators = [found[key] for key in _share_keys(group, topic_id)]
        if all(c != leader for c, leader in zip(coordinators, leaders, strict=True)) and len(set(coordinators)) > 1:
            return Layout(cluster, group, topic_id)
    raise AssertionError(f"no group spreads its share-partitions away from the leaders {leaders}")


def _accepted(consumers: list[ShareConsumer]) -> Counter:
    return Counter(int(line[1]) for c in consumers for line in c.lines() if line[:1] == ["accept"])


def _wait_for_all(cluster: ClusterProcess, consumers: list[ShareConsumer], upto: int, timeout: float) -> None:
    def covered() -> bool:
        for consumer in consumers:
            if consumer.process.poll() is not None:
                raise AssertionError(f"a share consumer exited:\n{consumer.out.read_text()}")
        return set(_accepted(consumers)) >= set(range(upto))

    cluster.wait_until(covered, timeout, f"records 0..{upto - 1} acknowledged", interval=0.5)


def _offsets(cluster: ClusterProcess, layout: Layout) -> dict[int, tuple[int, int]] | None:
    """partition -> (start offset, lag) as DescribeShareGroupOffsets answers them at the group's coordinator."""
    coordinator = layout.group_coordinator()
    if coordinator not in cluster.alive():
        return None
    with RawClient(cluster.broker(coordinator).bootstrap) as client:
        client.sock.settimeout(60)
        group = client.request(DESCRIBE_SHARE_GROUP_OFFSETS, 1, groups=[
            DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup(group_id=layout.group,
                                                                                   topics=None)]).groups[0]
    if group.error_code != ErrorCode.NONE:
        return None
    return {p.partition_index: (p.start_offset, p.lag) for t in group.topics for p in t.partitions}


def _both_assigned(cluster: ClusterProcess, layout: Layout) -> bool:
    """The group is Stable with two members, each told its partitions (so each record goes to the one assigned)."""
    coordinator = layout.group_coordinator()
    if coordinator not in cluster.alive():
        return False
    with RawClient(cluster.broker(coordinator).bootstrap) as client:
        group = client.request(SHARE_GROUP_DESCRIBE, 1, group_ids=[layout.group]).groups[0]
    return (group.error_code == ErrorCode.NONE and group.group_state == "Stable" and len(group.members) == 2
            and all(m.assignment.topic_partitions for m in group.members))


def _kill_and_settle(cluster: ClusterProcess, layout: Layout, victim: int) -> None:
    cluster.kill(victim)
    cluster.wait_until(lambda: layout.settled_without(victim), 60, f"the parts broker {victim} led taken over")


def test_two_members_share_a_replicated_topic_across_brokers_and_a_broker_kill(tmp_path):
    with ClusterProcess(tmp_path, brokers=3, overrides=BROKER) as cluster:
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, 3)])[TOPIC].result(30)
        topic_id = cluster.wait_until(lambda: _topic_id(cluster), 30, "the topic id")
        cluster.wait_until(lambda: -1 not in [cluster.leader_of(TOPIC, p) for p in range(PARTITIONS)], 30,
                           "every partition led")
        layout = _spread_group(cluster, topic_id)
        print(layout)
        run("config", cluster.bootstrap, layout.group, "share.auto.offset.reset=earliest")

        consumers = [ShareConsumer(tmp_path / f"{name}.out", cluster.bootstrap, layout.group, TOPIC, 0)
                     for name in ("a", "b")]
        try:
            for consumer in consumers:
                consumer.wait_for("ready", 90)
            cluster.wait_until(lambda: _both_assigned(cluster, layout), 60, "both members assigned their partitions")
            third = RECORDS // 3
            run("produce", cluster.bootstrap, TOPIC, str(third))
            _wait_for_all(cluster, consumers, third, 90)
            before = _accepted(consumers)
            assert all(_accepted([c]) for c in consumers), "both members share the work"
            assert set(_accepted(consumers[:1])).isdisjoint(_accepted(consumers[1:])), "one member per record"

            # A broker leading a topic partition and the share state of another partition: kill -9.
            shares, leaders = layout.share_coordinators(), layout.leaders()
            victim = next((n for n in shares if n in leaders), None)
            assert victim is not None, layout
            print(f"killing broker {victim}: {layout}")
            _kill_and_settle(cluster, layout, victim)
            print(f"after the kill: {layout}")
            run("produce", cluster.bootstrap, TOPIC, str(third), str(third))
            _wait_for_all(cluster, consumers, 2 * third, 120)

            if FULL:  # the first broker back, then the share group's coordinator killed
                cluster.restart(victim)
                cluster.wait_until(lambda: all(len(cluster.partition_state(TOPIC, p)["isr"]) == 3
                                               for p in range(PARTITIONS)), 60, "the restarted broker in sync")
                second = layout.group_coordinator()
                print(f"killing the group coordinator, broker {second}: {layout}")
                _kill_and_settle(cluster, layout, second)
            run("produce", cluster.bootstrap, TOPIC, str(RECORDS - 2 * third), str(2 * third))
            _wait_for_all(cluster, consumers, RECORDS, 120)
            time.sleep(SETTLE_S)
        finally:
            for consumer in consumers:
                consumer.kill()

        accepted = _accepted(consumers)
        assert sorted(accepted) == list(range(RECORDS))
        again = {value: count for value, count in accepted.items() if count > 1}
        assert not {v for v in again if v in before}, f"records acknowledged before the kill came back: {again}"
        assert not again, f"records acknowledged more than once: {again}"
        # The group's coordinator gathers its share-partitions' start offsets from their share coordinators
        # (ReadShareGroupStateSummary): every record is done, nothing lags.
        described = cluster.wait_until(lambda: _offsets(cluster, layout), 30, "the share group's offsets")
        assert sum(start for start, _ in described.values()) == RECORDS and {lag for _, lag in described.values()} == {0}
