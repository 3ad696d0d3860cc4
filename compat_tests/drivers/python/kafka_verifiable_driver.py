"""The driver of Kafka's black-box test tools: BrokerApiVersionsCommand, VerifiableProducer, VerifiableConsumer.

The verifiable tools print one JSON event per line (producer_send_success with partition and offset, tool_data
with sent/acked counts; partitions_assigned/revoked, records_consumed with offset ranges, offsets_committed).
They never print values: "intact" here means every acked offset is consumed, once, with CRCs checked by the Java
consumer. Topics are created with kafka-topics in the ToolHost JVM; the verifiable tools run in JVMs of their own
(they print from their I/O threads and JVM shutdown hooks).
"""
from __future__ import annotations

import json
import re

import driver_common as dc
import kafka_tools as kt
from driver_common import expect

# APIs every client of this matrix needs: each must show a usable version in BrokerApiVersionsCommand's output.
REQUIRED_APIS = ("Produce", "Fetch", "ListOffsets", "Metadata", "OffsetCommit", "OffsetFetch", "FindCoordinator",
                 "JoinGroup", "Heartbeat", "LeaveGroup", "SyncGroup", "ApiVersions", "CreateTopics", "DeleteTopics",
                 "InitProducerId", "DescribeConfigs")


def events(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def create_topic(bootstrap: str, topic: str, partitions: int, *config: str) -> None:
    kt.run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic, "--partitions", str(partitions),
           "--replication-factor", "1", *config)


def produce(bootstrap: str, topic: str, count: int, settings: dict[str, object]) -> dict[int, list[int]]:
    """VerifiableProducer sends count records; returns the acked offsets by partition."""
    config = kt.properties_file(settings)
    out = kt.run_alone("verifiable-producer", "--bootstrap-server", bootstrap, "--topic", topic, "--max-messages",
                 str(count), "--command-config", config).stdout
    seen = events(out)
    summary = next((e for e in seen if e["name"] == "tool_data"), {})
    expect(summary.get("acked") == count, f"producer sent {summary.get('sent')}, acked {summary.get('acked')}; "
                                          f"errors: {[e for e in seen if e['name'] == 'producer_send_error'][:2]}")
    acked: dict[int, list[int]] = {}
    for e in seen:
        if e["name"] == "producer_send_success":
            acked.setdefault(e["partition"], []).append(e["offset"])
    return acked


def consumed_ranges(seen: list[dict]) -> dict[int, list[int]]:
    """Offsets consumed by partition, from records_consumed events (each gives a contiguous min..max range)."""
    out: dict[int, list[int]] = {}
    for e in seen:
        if e["name"] == "records_consumed":
            for p in e["partitions"]:
                out.setdefault(p["partition"], []).extend(range(p["minOffset"], p["maxOffset"] + 1))
    return out


def produce_and_verify(bootstrap: str, topic: str, count: int, settings: dict[str, object], what: str,
                       security: dict[str, str] | None = None) -> str:
    """With security (a secured listener's settings), every tool connects through that listener."""
    consumer_config = ("--command-config", kt.properties_file(security)) if security else ()
    create_topic(bootstrap, topic, 1, *consumer_config)
    acked = produce(bootstrap, topic, count, {**settings, **(security or {})})
    expect(acked == {0: list(range(count))}, f"acked offsets are not 0..{count - 1} on partition 0")
    out = kt.run_alone("verifiable-consumer", "--bootstrap-server", bootstrap, "--topic", topic, "--group-id",
                 f"{topic}.reader", "--max-messages", str(count), "--reset-policy", "earliest",
                 *consumer_config).stdout
    consumed = consumed_ranges(events(out))
    expect(consumed == acked, f"consumed offsets {({p: len(o) for p, o in consumed.items()})} differ from acked")
    return f"{what}: {count} records acked at offsets 0..{count - 1}, each consumed once"


def metadata(bootstrap: str, prefix: str) -> str:
    # The tool names its client admin-1 whatever client.id says: the matrix looks for that id (negotiated.py).
    out = kt.run("broker-api-versions", "--bootstrap-server", bootstrap).stdout
    brokers = re.findall(r"^(\S+) \(id: (\d+) rack", out, re.MULTILINE)
    expect(len(brokers) == 1 and brokers[0][0] == bootstrap, f"brokers listed: {brokers}")
    usable = dict(re.findall(r"^\s+(\w+)\(\d+\): .*?\[usable: (\d+)\]", out, re.MULTILINE))
    missing = [api for api in REQUIRED_APIS if api not in usable]
    expect(not missing, f"no usable version of {missing}")
    return f"1 broker (node {brokers[0][1]} at {brokers[0][0]}); {len(usable)} APIs with a usable version"


def compression(codec: str):
    def scenario(bootstrap: str, prefix: str) -> str:
        return produce_and_verify(bootstrap, dc.topic_name(prefix, f"compression_{codec}"), dc.COMPRESSED_COUNT,
                                  {"compression.type": codec, "linger.ms": 20}, codec)
    return scenario


def idempotent(bootstrap: str, prefix: str) -> str:
    return produce_and_verify(bootstrap, dc.topic_name(prefix, "idempotent"), dc.IDEMPOTENT_COUNT,
                              # The tool sets retries=0 unless told, which idempotence refuses.
                              {"enable.idempotence": "true", "acks": "all", "retries": 2147483647}, "idempotent")


def secured(scenario: str):
    """The sasl_scram and tls cells: 10 records through the secured listener (the verifiable tools print offsets,
    not values: every acked offset consumed once)."""
    def run(bootstrap: str, prefix: str) -> str:
        settings = dc.java_security_settings(scenario)
        return produce_and_verify(settings["bootstrap.servers"], dc.topic_name(prefix, scenario), dc.RECORD_COUNT, {},
                                  f"{scenario} ({settings['security.protocol']})", settings)
    return run


class Member:
    """A VerifiableConsumer of the group in its own JVM, with its events parsed as they come."""

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        self.tool = kt.Background("verifiable-consumer", "--bootstrap-server", bootstrap, "--topic", topic,
                                  "--group-id", group, "--reset-policy", "earliest")

    def events(self) -> list[dict]:
        return events("\n".join(self.tool.lines))

    def assignment(self) -> set[int]:
        assigned: set[int] = set()
        for e in self.events():
            if e["name"] == "partitions_assigned":
                assigned |= {p["partition"] for p in e["partitions"]}
            elif e["name"] == "partitions_revoked":
                assigned -= {p["partition"] for p in e["partitions"]}
        return assigned


def consumer_group(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "consumer_group")
    group = dc.topic_name(prefix, "consumer_group", "group")
    create_topic(bootstrap, topic, dc.GROUP_PARTITIONS)
    total = dc.GROUP_PARTITIONS * dc.GROUP_RECORDS_PER_PARTITION
    acked = produce(bootstrap, topic, total,
                    {"partitioner.class": "org.apache.kafka.clients.producer.RoundRobinPartitioner"})
    a = Member(bootstrap, topic, group)
    b = None
    try:
        dc.wait_until(lambda: a.assignment() == set(range(dc.GROUP_PARTITIONS)), "A to get all 4 partitions")
        b = Member(bootstrap, topic, group)
        dc.wait_until(lambda: len(a.assignment()) == 2 and len(b.assignment()) == 2
                      and not a.assignment() & b.assignment(), "the rebalance to 2+2")
        split = (sorted(a.assignment()), sorted(b.assignment()))

        def committed() -> dict[int, int]:
            offsets: dict[int, int] = {}
            for e in a.events() + b.events():
                if e["name"] == "offsets_committed" and e.get("success"):
                    for o in e["offsets"]:
                        offsets[o["partition"]] = max(offsets.get(o["partition"], 0), o["offset"])
            return offsets

        ends = {p: max(offsets) + 1 for p, offsets in acked.items()}
        dc.wait_until(lambda: committed() == ends, f"commits up to the end of each partition {ends}")
        consumed = consumed_ranges(a.events() + b.events())
        expect({p: set(o) for p, o in consumed.items()} == {p: set(o) for p, o in acked.items()},
               "the members did not consume every acked record")
    finally:
        for member in (a, b):
            if member:
                member.tool.stop()
    return f"A: 4 partitions, then A {split[0]} + B {split[1]}; {total} records; committed {ends}"


dc.run({
    "metadata": metadata,
    **{f"compression_{codec}": compression(codec) for codec in ("gzip", "snappy", "lz4", "zstd")},
    "idempotent": idempotent,
    "consumer_group": consumer_group,
    "sasl_scram": secured("sasl_scram"),
    "tls": secured("tls"),
})
