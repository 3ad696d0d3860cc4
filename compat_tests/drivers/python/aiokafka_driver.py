"""The aiokafka driver of the matrix (see driver_common for the command line and output)."""
from __future__ import annotations

import asyncio
import os
import time

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import CommitFailedError, IllegalStateError, RebalanceInProgressError
from aiokafka.helpers import create_ssl_context

import driver_common as dc
from driver_common import expect

TOPIC_ALREADY_EXISTS = 36


async def admin_client(bootstrap: str, **config) -> AIOKafkaAdminClient:
    client = AIOKafkaAdminClient(bootstrap_servers=bootstrap, **config)
    await client.start()
    return client


async def create_topics(bootstrap: str, topics: list[NewTopic]) -> list[int]:
    """Create topics; return the error code of each (aiokafka returns errors instead of raising)."""
    client = await admin_client(bootstrap)
    try:
        response = (await client.create_topics(topics)).to_object()
    finally:
        await client.close()
    return [entry["error_code"] for entry in response["topic_errors"]]


async def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    errors = await create_topics(bootstrap, [NewTopic(topic, partitions, 1)])
    expect(errors == [0], f"create_topics answered error codes {errors}")


async def produce(bootstrap: str, topic: str, records, **config) -> None:
    """Send (key, value, headers, partition, timestamp_ms) tuples and wait for every acknowledgement."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, **config)
    await producer.start()
    try:
        futures = [await producer.send(topic, value=v, key=k, headers=h, partition=p, timestamp_ms=ts)
                   for k, v, h, p, ts in records]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def consume_assigned(bootstrap: str, topic: str, count: int, **config) -> list:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, **config)
    await consumer.start()
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    await consumer.seek_to_beginning(tp)
    records, until = [], dc.deadline()
    try:
        while len(records) < count and not dc.past(until):
            for batch in (await consumer.getmany(timeout_ms=500)).values():
                records.extend(batch)
    finally:
        await consumer.stop()
    return records


async def described_partitions(client: AIOKafkaAdminClient, topic: str) -> list[dict]:
    """The topic's partitions from Metadata, waiting while a just-created topic is not in the broker's cache yet."""
    until = dc.deadline()
    while True:
        partitions = (await client.describe_topics([topic]))[0]["partitions"]
        if partitions or dc.past(until):
            return partitions
        await asyncio.sleep(0.2)


async def metadata(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "metadata")
    await create_topic(bootstrap, topic, 3)
    client = await admin_client(bootstrap, client_id=dc.metadata_client_id(prefix))
    try:
        cluster = await client.describe_cluster()
        partitions = await described_partitions(client, topic)
    finally:
        await client.close()
    brokers = cluster["brokers"]
    expect(len(brokers) == 1, f"expected 1 broker, metadata lists {len(brokers)}")
    broker = brokers[0]
    expect(f"{broker['host']}:{broker['port']}" == bootstrap, f"broker at {broker['host']}:{broker['port']}")
    expect(sorted(p["partition"] for p in partitions) == [0, 1, 2], f"partitions {partitions}")
    leaders = {p["leader"] for p in partitions}
    expect(leaders == {broker["node_id"]}, f"partition leaders {leaders}")
    return f"1 broker (node {broker['node_id']} at {broker['host']}:{broker['port']}); {topic}: 3 partitions led by it"


async def roundtrip(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "roundtrip")
    await create_topic(bootstrap, topic)
    await produce(bootstrap, topic, [(k, v, h, 0, None) for k, v, h in dc.roundtrip_records()])
    records = await consume_assigned(bootstrap, topic, dc.RECORD_COUNT)
    return dc.check_roundtrip([(r.offset, r.key, r.value, list(r.headers)) for r in records])


def compression(codec: str):
    async def scenario(bootstrap: str, prefix: str) -> str:
        topic = dc.topic_name(prefix, f"compression_{codec}")
        await create_topic(bootstrap, topic)
        expected = [dc.compressible_value(i) for i in range(dc.COMPRESSED_COUNT)]
        await produce(bootstrap, topic, [(None, v, None, 0, None) for v in expected],
                      compression_type=codec, linger_ms=20)
        records = await consume_assigned(bootstrap, topic, len(expected))
        return dc.check_values([r.value for r in records], expected, codec)
    return scenario


async def large_records(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "large_records")
    await create_topic(bootstrap, topic)
    expected = [os.urandom(dc.LARGE_RECORD_BYTES) for _ in range(dc.LARGE_RECORD_COUNT)]
    await produce(bootstrap, topic, [(None, v, None, 0, None) for v in expected])
    records = await consume_assigned(bootstrap, topic, len(expected))
    return dc.check_values([r.value for r in records], expected, "1 MB records")


async def seek(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "seek")
    await create_topic(bootstrap, topic)
    base = int(time.time() * 1000) - 60_000
    await produce(bootstrap, topic, [(f"key-{i}".encode(), b"v", None, 0, base + i * dc.SEEK_STEP_MS)
                                     for i in range(dc.RECORD_COUNT)])
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])

    async def next_offset() -> int:
        record = await asyncio.wait_for(consumer.getone(), dc.SCENARIO_DEADLINE_S)
        return record.offset

    try:
        await consumer.seek_to_beginning(tp)
        first = await next_offset()
        expect(first == 0, f"after seek to beginning read offset {first}")
        target = base + dc.SEEK_TARGET_INDEX * dc.SEEK_STEP_MS - dc.SEEK_STEP_MS // 2
        found = (await consumer.offsets_for_times({tp: target}))[tp]
        expect(found is not None and found.offset == dc.SEEK_TARGET_INDEX, f"offsets_for_times gave {found}")
        consumer.seek(tp, found.offset)
        at_time = await next_offset()
        expect(at_time == dc.SEEK_TARGET_INDEX, f"after seek to timestamp read offset {at_time}")
        await consumer.seek_to_end(tp)
        await consumer.position(tp)
        await produce(bootstrap, topic, [(None, b"after-end", None, 0, None)])
        after_end = await next_offset()
    finally:
        await consumer.stop()
    expect(after_end == dc.RECORD_COUNT, f"after seek to end read offset {after_end}")
    return f"beginning -> 0, timestamp -> {at_time}, end -> {after_end}"


async def idempotent(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "idempotent")
    await create_topic(bootstrap, topic)
    expected = [f"idempotent-{i}".encode() for i in range(dc.IDEMPOTENT_COUNT)]
    await produce(bootstrap, topic, [(None, v, None, 0, None) for v in expected], enable_idempotence=True, acks="all")
    records = await consume_assigned(bootstrap, topic, len(expected))
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await consumer.start()
    end = (await consumer.end_offsets([TopicPartition(topic, 0)]))[TopicPartition(topic, 0)]
    await consumer.stop()
    expect(end == len(expected), f"log end offset {end}, expected {len(expected)} (duplicates?)")
    return dc.check_values([r.value for r in records], expected, "idempotent")


class GroupMember:
    """A consumer of the group that fetches and commits in its own task until stopped."""

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        self.consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                         auto_offset_reset="earliest", enable_auto_commit=False)
        self.seen: set[tuple[int, int]] = set()
        self.task: asyncio.Task | None = None

    @property
    def assignment(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}

    async def start(self) -> None:
        await self.consumer.start()
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            for tp, batch in (await self.consumer.getmany(timeout_ms=200)).items():
                self.seen.update((tp.partition, r.offset) for r in batch)
            try:
                await self.consumer.commit()
            except (CommitFailedError, IllegalStateError, RebalanceInProgressError):
                pass  # the group is rebalancing (or the partition just moved): the next round commits again

    async def stop(self) -> None:
        self.task.cancel()
        try:
            await self.task
        except asyncio.CancelledError:
            pass
        await self.consumer.stop()

    def failed(self) -> bool:
        return self.task.done() and not self.task.cancelled()


async def wait_until(condition, what: str, members) -> None:
    until = dc.deadline()
    while not condition():
        for member in members:
            if member.failed():
                raise dc.ScenarioFailed(f"member failed: {member.task.exception()!r}")
        if dc.past(until):
            raise dc.ScenarioFailed(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)


async def consumer_group(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "consumer_group")
    group = dc.topic_name(prefix, "consumer_group", "group")
    await create_topic(bootstrap, topic, dc.GROUP_PARTITIONS)
    await produce(bootstrap, topic, [(None, f"{p}-{i}".encode(), None, p, None)
                                     for p in range(dc.GROUP_PARTITIONS)
                                     for i in range(dc.GROUP_RECORDS_PER_PARTITION)])
    a = GroupMember(bootstrap, topic, group)
    await a.start()
    await wait_until(lambda: a.assignment == set(range(dc.GROUP_PARTITIONS)), "A to get all 4 partitions", [a])
    b = GroupMember(bootstrap, topic, group)
    await b.start()
    total = dc.GROUP_PARTITIONS * dc.GROUP_RECORDS_PER_PARTITION
    await wait_until(lambda: len(a.assignment) == 2 and len(b.assignment) == 2 and not a.assignment & b.assignment,
                     "the rebalance to 2+2", [a, b])
    split = (sorted(a.assignment), sorted(b.assignment))
    await wait_until(lambda: len(a.seen | b.seen) == total, f"all {total} records", [a, b])
    await asyncio.sleep(0.5)  # one more fetch+commit round in each member
    await a.stop()
    await b.stop()
    client = await admin_client(bootstrap)
    try:
        committed = await client.list_consumer_group_offsets(group)
    finally:
        await client.close()
    offsets = {tp.partition: meta.offset for tp, meta in committed.items()}
    expect(offsets == {p: dc.GROUP_RECORDS_PER_PARTITION for p in range(dc.GROUP_PARTITIONS)},
           f"committed offsets {offsets}")
    return f"A: 4 partitions, then A {split[0]} + B {split[1]}; {total} records; committed 10 on each partition"


async def admin_scenario(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "admin")
    errors = await create_topics(bootstrap, [NewTopic(topic, 3, 1, topic_configs={"retention.ms": dc.RETENTION_MS})])
    expect(errors == [0], f"create_topics answered error codes {errors}")
    again = await create_topics(bootstrap, [NewTopic(topic, 3, 1)])
    expect(again == [TOPIC_ALREADY_EXISTS], f"creating the topic again answered {again}")
    client = await admin_client(bootstrap)
    try:
        partitions = await described_partitions(client, topic)
        expect(len(partitions) == 3, f"describe_topics: {partitions}")
        responses = await client.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
        configs = {entry["config_names"]: entry["config_value"]
                   for response in responses for resource in response.to_object()["resources"]
                   for entry in resource["config_entries"]}
        expect(configs.get("retention.ms") == dc.RETENTION_MS, f"retention.ms = {configs.get('retention.ms')}")
        expect(configs.get("cleanup.policy") == "delete", f"cleanup.policy = {configs.get('cleanup.policy')}")
        await client.delete_topics([topic])
        until = dc.deadline()
        while topic in await client.list_topics():
            expect(not dc.past(until), "the deleted topic stayed in the topic list")
            await asyncio.sleep(0.2)
    finally:
        await client.close()
    return f"created, duplicate refused, 3 partitions, retention.ms={dc.RETENTION_MS}, deleted"


def secured(scenario: str, bootstrap_variable: str, config: dict):
    """The sasl_scram and tls cells: 10 records through a secured listener (compat_tests/security_listeners.py)."""
    async def run(bootstrap: str, prefix: str) -> str:
        topic = dc.topic_name(prefix, scenario)
        await create_topic(bootstrap, topic)
        secured_bootstrap = os.environ.get(bootstrap_variable, "")
        settings = dict(config)
        if settings["security_protocol"] == "SSL":
            settings["ssl_context"] = create_ssl_context(cafile=os.environ.get("COMPAT_TLS_CA"))
        expected = dc.secured_values()
        await produce(secured_bootstrap, topic, [(None, v, None, 0, None) for v in expected], **settings)
        records = await consume_assigned(secured_bootstrap, topic, len(expected), **settings)
        return dc.check_values([r.value for r in records], expected, f"{scenario} ({settings['security_protocol']})")
    return run


SECURED = {
    "sasl_scram": secured("sasl_scram", "COMPAT_SASL_BOOTSTRAP", {
        "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": os.environ.get("COMPAT_SCRAM_USER", ""),
        "sasl_plain_password": os.environ.get("COMPAT_SCRAM_PASSWORD", "")}),
    "tls": secured("tls", "COMPAT_TLS_BOOTSTRAP", {"security_protocol": "SSL"}),
}


def compacted(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "compacted")
    errors = asyncio.run(create_topics(bootstrap, [NewTopic(topic, 1, 1, topic_configs=dc.COMPACTED_CONFIG)]))
    expect(errors == [0], f"create_topics answered error codes {errors}")
    tp = TopicPartition(topic, 0)

    def send(records: list[tuple[bytes, bytes | None]]) -> None:
        asyncio.run(produce(bootstrap, topic, [(key, value, None, 0, None) for key, value in records]))

    async def read_all() -> list[tuple[bytes | None, bytes | None]]:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        await consumer.start()
        try:
            consumer.assign([tp])
            await consumer.seek_to_beginning(tp)
            end = (await consumer.end_offsets([tp]))[tp]
            found, until = [], dc.deadline()
            while await consumer.position(tp) < end:
                expect(not dc.past(until), f"offset {end} not reached")
                for batch in (await consumer.getmany(timeout_ms=500)).values():
                    found.extend((r.key, r.value) for r in batch)
            return found
        finally:
            await consumer.stop()

    return dc.compacted_scenario(send, lambda: asyncio.run(read_all()))


def sync(coroutine_function):
    return lambda bootstrap, prefix: asyncio.run(coroutine_function(bootstrap, prefix))


dc.run(dc.core_scenarios(lambda codec: sync(compression(codec)), metadata=sync(metadata), roundtrip=sync(roundtrip),
                         large_records=sync(large_records), seek=sync(seek), idempotent=sync(idempotent),
                         consumer_group=sync(consumer_group), admin=sync(admin_scenario), compacted=compacted,
                         **{name: sync(scenario) for name, scenario in SECURED.items()}))
