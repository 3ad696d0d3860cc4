"""Consumer groups against a real broker process, driven by kafka-python, confluent-kafka and aiokafka."""

from __future__ import annotations

import collections
import subprocess
import sys
import textwrap

import confluent_kafka
import kafka
import pytest
from confluent_kafka.admin import AdminClient
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

from compat_tests.reference_kafka import ReferenceKafka
from tests.integration.group_clients import (
    AioKafkaConsumer,
    ConfluentConsumer,
    KafkaPythonConsumer,
    create_topic,
    produce,
    wait_for,
)

PARTITIONS = 6
GROUP_OVERRIDES = {"group.min.session.timeout.ms": "1000"}


@pytest.fixture
def group_broker(broker_factory):
    return broker_factory(**GROUP_OVERRIDES)


def assert_exactly_once(consumers, expected: int) -> None:
    seen = collections.Counter(record for c in consumers for record in c.consumed)
    duplicated = [record for record, n in seen.items() if n > 1]
    assert not duplicated, f"consumed more than once: {duplicated[:10]}"
    assert len(seen) == expected


def assert_partitions_split(consumers) -> None:
    held = [c.assignment for c in consumers]
    assert set().union(*held) == set(range(PARTITIONS)), held
    assert sum(len(h) for h in held) == PARTITIONS, held


def test_three_client_libraries_share_a_group_and_take_over_on_close(group_broker):
    bootstrap = group_broker.bootstrap
    create_topic(bootstrap, "mixed", PARTITIONS)
    produce(bootstrap, "mixed", 10, PARTITIONS)
    consumers = [cls(bootstrap, "mixed-group", "mixed").start()
                 for cls in (KafkaPythonConsumer, ConfluentConsumer, AioKafkaConsumer)]
    try:
        wait_for(lambda: sum(len(c.consumed) for c in consumers) >= 60
                 and all(c.assignment for c in consumers)
                 and sum(len(c.assignment) for c in consumers) == PARTITIONS, 60, "three members sharing 6 partitions")
        assert_partitions_split(consumers)
        leaving = consumers.pop(1)
        leaving.close()
        produce(bootstrap, "mixed", 10, PARTITIONS, tag="after-")
        wait_for(lambda: sum(len(c.consumed) for c in consumers) + len(leaving.consumed) >= 120
                 and sum(len(c.assignment) for c in consumers) == PARTITIONS, 60,
                 "the two remaining members to take over and consume everything")
        assert_partitions_split(consumers)
        assert_exactly_once(consumers + [leaving], 120)
    finally:
        for c in consumers:
            c.close()


KILLED_CONSUMER = textwrap.dedent("""
    import sys, kafka
    consumer = kafka.KafkaConsumer("victim", bootstrap_servers=sys.argv[1], group_id="victim-group",
                                   auto_offset_reset="earliest", enable_auto_commit=False,
                                   session_timeout_ms=3000, heartbeat_interval_ms=300)
    consumer.partitions_for_topic("victim")  # as group_clients.know_the_topic_before_joining, for the same reason
    while True:
        batches = consumer.poll(200)
        if batches:
            consumer.commit()
        if consumer.assignment():
            print("assigned", flush=True)
""")


def test_a_killed_member_loses_its_partitions_within_the_session_timeout(group_broker):
    bootstrap = group_broker.bootstrap
    create_topic(bootstrap, "victim", PARTITIONS)
    produce(bootstrap, "victim", 5, PARTITIONS)
    process = subprocess.Popen([sys.executable, "-c", KILLED_CONSUMER, bootstrap], stdout=subprocess.PIPE)
    survivor = KafkaPythonConsumer(bootstrap, "victim-group", "victim")
    try:
        assert process.stdout.readline().strip() == b"assigned"
        survivor.start()
        wait_for(lambda: 0 < len(survivor.assignment) < PARTITIONS, 30, "the survivor to share the partitions")
        process.kill()  # no LeaveGroup: only the session timeout tells the coordinator
        process.wait()
        admin = kafka.KafkaAdminClient(bootstrap_servers=bootstrap)
        committed = {tp.partition: o.offset for tp, o in admin.list_group_offsets("victim-group")["victim-group"].items()}
        admin.close()
        produce(bootstrap, "victim", 5, PARTITIONS, tag="after-")
        wait_for(lambda: len(survivor.assignment) == PARTITIONS, 20, "the survivor to take every partition")
        wait_for(lambda: {p for p, o in survivor.consumed if o >= 5} == set(range(PARTITIONS)), 20,
                 "the survivor to consume what was produced after the kill")
        first = {}
        for partition, offset in survivor.consumed:
            first.setdefault(partition, offset)
        for partition in set(range(PARTITIONS)) - {p for p, _ in survivor.consumed if first[p] == 0}:
            # Taken over from the killed member: resumed exactly at its last commit.
            assert first[partition] == committed.get(partition, 0)
    finally:
        if process.poll() is None:
            process.kill()
        survivor.close()


@pytest.fixture(scope="module")
def reference_kafka(tmp_path_factory):
    """Apache Kafka 4.3.1 with the same group settings, the judge of what a group test may expect of a coordinator."""
    with ReferenceKafka(tmp_path_factory.mktemp("kafka"), settings=GROUP_OVERRIDES) as reference:
        yield reference


@pytest.mark.parametrize("coordinator", ["wirebroker", "kafka-4.3.1"])
@pytest.mark.parametrize("assignor", [RangePartitionAssignor, RoundRobinPartitionAssignor, StickyPartitionAssignor,
                                      CooperativeStickyAssignor], ids=lambda a: a.name)
def test_client_side_assignors(request, coordinator, assignor):
    broker = request.getfixturevalue("group_broker" if coordinator == "wirebroker" else "reference_kafka")
    bootstrap = broker.bootstrap
    topic = f"assigned-{assignor.name}"  # one Kafka serves every assignor
    create_topic(bootstrap, topic, PARTITIONS)
    produce(bootstrap, topic, 5, PARTITIONS)
    consumers = [KafkaPythonConsumer(bootstrap, f"{topic}-group", topic,
                                     partition_assignment_strategy=[assignor]).start() for _ in range(2)]
    try:
        wait_for(lambda: sum(len(c.consumed) for c in consumers) >= 30 and all(len(c.assignment) == 3
                                                                               for c in consumers), 40,
                 f"two members sharing with {assignor.name}")
        assert_partitions_split(consumers)
        assert_exactly_once(consumers, 30)
    finally:
        for c in consumers:
            c.close()


@pytest.mark.parametrize("how", ["stop", "kill"])
def test_committed_offsets_survive_a_broker_restart(broker_factory, how):
    # Few offsets partitions: recovering each unflushed log after kill -9 is slow (reported to the lead).
    broker = broker_factory(**{"offsets.topic.num.partitions": "3"})
    bootstrap = broker.bootstrap
    create_topic(bootstrap, "durable", 3)
    produce(bootstrap, "durable", 4, 3)
    consumer = kafka.KafkaConsumer(bootstrap_servers=bootstrap, group_id="durable-group",
                                   enable_auto_commit=False)
    partitions = [kafka.TopicPartition("durable", p) for p in range(3)]
    consumer.assign(partitions)
    consumer.commit({tp: kafka.OffsetAndMetadata(tp.partition + 1, f"meta-{tp.partition}", -1)
                     for tp in partitions})
    consumer.close()
    broker.stop() if how == "stop" else broker.kill()
    broker.start()
    admin = kafka.KafkaAdminClient(bootstrap_servers=bootstrap)
    offsets = admin.list_group_offsets("durable-group")
    admin.close()
    assert {tp.partition: (o.offset, o.metadata) for tp, o in offsets["durable-group"].items()} == {
        p: (p + 1, f"meta-{p}") for p in range(3)}


def test_cooperative_sticky_rebalances_incrementally(group_broker):
    bootstrap = group_broker.bootstrap
    create_topic(bootstrap, "coop", PARTITIONS)
    config = {"partition.assignment.strategy": "cooperative-sticky"}
    first = ConfluentConsumer(bootstrap, "coop-group", "coop", **config).start()
    second = None
    try:
        wait_for(lambda: len(first.assignment) == PARTITIONS, 30, "the first member to get everything")
        second = ConfluentConsumer(bootstrap, "coop-group", "coop", **config).start()
        wait_for(lambda: len(second.assignment) == 3 and len(first.assignment) == 3, 30, "a 3/3 split")
        # Incremental: the first member gave up only what moved, never its whole assignment.
        assert first.revoked and all(len(r) < PARTITIONS for r in first.revoked)
        assert first.assignment.isdisjoint(second.assignment)
    finally:
        first.close()
        if second is not None:
            second.close()


def test_static_member_restart_within_session_keeps_its_partitions_without_rebalance(broker_factory):
    broker = broker_factory(**{"group.min.session.timeout.ms": "1000"})
    bootstrap = broker.bootstrap
    create_topic(bootstrap, "static", PARTITIONS)
    static = {"session.timeout.ms": 10000}
    a = ConfluentConsumer(bootstrap, "static-group", "static", **{"group.instance.id": "a"}, **static).start()
    b = ConfluentConsumer(bootstrap, "static-group", "static", **{"group.instance.id": "b"}, **static).start()
    try:
        wait_for(lambda: len(a.assignment) == 3 and len(b.assignment) == 3, 30, "a 3/3 split")
        callbacks_of_a = (len(a.assigned), len(a.revoked))
        held_by_b = set(b.assignment)
        b.close()
        b = ConfluentConsumer(bootstrap, "static-group", "static", **{"group.instance.id": "b"}, **static).start()
        wait_for(lambda: b.assignment, 30, "the restarted static member's assignment")
        assert b.assignment == held_by_b
        assert (len(a.assigned), len(a.revoked)) == callbacks_of_a  # the other member saw no rebalance
    finally:
        a.close()
        b.close()


def test_group_and_lag_listing_through_admin_clients(group_broker):
    bootstrap = group_broker.bootstrap
    create_topic(bootstrap, "lag", 3)
    produce(bootstrap, "lag", 10, 3)
    consumer = kafka.KafkaConsumer(bootstrap_servers=bootstrap, group_id="lag-group", enable_auto_commit=False)
    partitions = [kafka.TopicPartition("lag", p) for p in range(3)]
    consumer.assign(partitions)
    committed = {0: 4, 1: 10, 2: 0}
    consumer.commit({kafka.TopicPartition("lag", p): kafka.OffsetAndMetadata(o, "", -1) for p, o in committed.items()})
    end_offsets = {tp.partition: o for tp, o in consumer.end_offsets(partitions).items()}
    consumer.close()
    lag = {p: end_offsets[p] - committed[p] for p in committed}
    assert lag == {0: 6, 1: 0, 2: 10}

    admin = kafka.KafkaAdminClient(bootstrap_servers=bootstrap)
    assert "lag-group" in [g["group_id"] for g in admin.list_groups()]
    assert {tp.partition: o.offset for tp, o in admin.list_group_offsets("lag-group")["lag-group"].items()} == committed
    admin.close()

    confluent = AdminClient({"bootstrap.servers": bootstrap})
    listed = confluent.list_consumer_groups().result(timeout=15)
    assert "lag-group" in [g.group_id for g in listed.valid]
    request = confluent_kafka.ConsumerGroupTopicPartitions("lag-group")
    result = confluent.list_consumer_group_offsets([request])["lag-group"].result(timeout=15)
    assert {tp.partition: tp.offset for tp in result.topic_partitions} == committed


@pytest.fixture
def kip848_broker(broker_factory):
    return broker_factory(**{"group.consumer.heartbeat.interval.ms": "300",
                             "group.consumer.session.timeout.ms": "6000", **GROUP_OVERRIDES})


def test_kip848_consumer_protocol_with_confluent_kafka(kip848_broker):
    bootstrap = kip848_broker.bootstrap
    create_topic(bootstrap, "kip848", PARTITIONS)
    produce(bootstrap, "kip848", 10, PARTITIONS)
    consumers = [ConfluentConsumer(bootstrap, "kip848-group", "kip848", **{"group.protocol": "consumer"}).start()
                 for _ in range(2)]
    try:
        wait_for(lambda: sum(len(c.consumed) for c in consumers) >= 60
                 and all(c.assignment for c in consumers)
                 and sum(len(c.assignment) for c in consumers) == PARTITIONS, 60, "two KIP-848 members sharing")
        assert_partitions_split(consumers)
        assert_exactly_once(consumers, 60)
        confluent = AdminClient({"bootstrap.servers": bootstrap})
        described = confluent.describe_consumer_groups(["kip848-group"])["kip848-group"].result(timeout=15)
        assert len(described.members) == 2
    finally:
        for c in consumers:
            c.close()


def test_classic_and_consumer_protocol_members_share_a_group(kip848_broker):
    """A kafka-python (classic) group is upgraded when a KIP-848 member joins, shared, and downgraded when that
    member leaves; nothing is consumed twice."""
    bootstrap = kip848_broker.bootstrap
    create_topic(bootstrap, "migrating", PARTITIONS)
    produce(bootstrap, "migrating", 10, PARTITIONS)
    classic = KafkaPythonConsumer(bootstrap, "migrating-group", "migrating").start()
    modern = None
    try:
        wait_for(lambda: len(classic.assignment) == PARTITIONS, 30, "the classic member to hold everything")
        modern = ConfluentConsumer(bootstrap, "migrating-group", "migrating", **{"group.protocol": "consumer"}).start()
        wait_for(lambda: classic.assignment and modern.assignment
                 and sum(len(c.assignment) for c in (classic, modern)) == PARTITIONS, 40, "the two protocols sharing")
        assert_partitions_split([classic, modern])
        produce(bootstrap, "migrating", 10, PARTITIONS, tag="after-")
        wait_for(lambda: len(classic.consumed) + len(modern.consumed) >= 120, 30, "everything consumed")
        modern.close()
        wait_for(lambda: len(classic.assignment) == PARTITIONS, 30, "the classic member to take everything back")
        assert_exactly_once([classic, modern], 120)
    finally:
        classic.close()
        if modern is not None and modern._thread.is_alive():
            modern.close()
