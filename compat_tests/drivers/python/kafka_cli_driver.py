"""The driver of Kafka's command-line tools: kafka-topics (TopicCommand), kafka-console-producer/-consumer,
kafka-consumer-groups (ConsumerGroupCommand) and kafka-configs (ConfigCommand), each run as its own JVM.

The console producer cannot set timestamps and the console consumer cannot seek by time, so `seek` resets a
group's offsets with kafka-consumer-groups (--to-earliest, --to-datetime, --to-latest) and reads one record through
that group each time. The idempotent scenario is the verifiable producer's (kafka_verifiable_driver.py).
"""
from __future__ import annotations

import os
import re
import time
from datetime import datetime

import driver_common as dc
import kafka_tools as kt
from driver_common import expect

NULL_MARKER = "<null>"      # what the producer reads as a null value
NULL_LITERAL = "(null)"     # what the consumer prints for a null value
TIMEOUT_MS = str(int(dc.SCENARIO_DEADLINE_S * 1000))  # the console consumer gives up after this without records
PRINT_ALL = ("--formatter-property", "print.key=true", "--formatter-property", "print.headers=true",
             "--formatter-property", "print.offset=true", "--formatter-property", f"null.literal={NULL_LITERAL}")


def create_topic(bootstrap: str, topic: str, partitions: int = 1, *config: str) -> None:
    kt.run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic, "--partitions", str(partitions),
           "--replication-factor", "1", *config)


def produce(bootstrap: str, topic: str, lines: list[str], *args: str) -> None:
    kt.run("console-producer", "--bootstrap-server", bootstrap, "--topic", topic, *args,
           stdin="".join(line + "\n" for line in lines))


def consume(bootstrap: str, topic: str, count: int, *args: str) -> list[str]:
    """count records of partition 0 from the earliest offset, as the console consumer prints them."""
    proc = kt.run("console-consumer", "--bootstrap-server", bootstrap, "--topic", topic, "--partition", "0",
                  "--offset", "earliest", "--max-messages", str(count), "--timeout-ms", TIMEOUT_MS,
                  *args)
    return proc.stdout.splitlines()


def table(output: str) -> list[dict[str, str]]:
    """Rows of a kafka-consumer-groups table (a header line of column names, then whitespace-separated rows)."""
    rows, header = [], None
    for line in output.splitlines():
        cells = line.split()
        if not cells:
            continue
        if cells[0] == "GROUP":
            header = cells
        elif header and len(cells) >= len(header) - 1:
            rows.append(dict(zip(header, cells, strict=False)))
    return rows


def metadata(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "metadata")
    create_topic(bootstrap, topic, 3)
    named = kt.properties_file({"client.id": dc.metadata_client_id(prefix)})
    described = kt.run("topics", "--bootstrap-server", bootstrap, "--command-config", named, "--describe", "--topic",
                       topic).stdout
    partitions = [line for line in described.splitlines() if "Partition:" in line and "Leader:" in line]
    expect(len(partitions) == 3, f"describe shows {len(partitions)} partitions:\n{described}")
    leaders = {line.split("Leader:")[1].split()[0] for line in partitions}
    expect(leaders == {"0"}, f"partition leaders {leaders}")
    listed = kt.run("topics", "--bootstrap-server", bootstrap, "--command-config", named, "--list").stdout.split()
    expect(topic in listed, f"--list does not show {topic}")
    return f"{topic}: created, listed, 3 partitions led by node 0"


def roundtrip(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "roundtrip")
    create_topic(bootstrap, topic)
    lines = []
    for key, value, headers in dc.roundtrip_records():
        header_text = ",".join(f"{name}:{val.decode()}" for name, val in headers)
        lines.append(f"{header_text}\t{key.decode()}:{NULL_MARKER if value is None else value.decode()}")
    produce(bootstrap, topic, lines, "--reader-property", "parse.key=true", "--reader-property", "key.separator=:",
            "--reader-property", "parse.headers=true", "--reader-property", f"null.marker={NULL_MARKER}")
    consumed = []
    for line in consume(bootstrap, topic, dc.RECORD_COUNT, *PRINT_ALL):
        offset, headers, key, value = line.split("\t")
        pairs = [h.split(":", 1) for h in headers.split(",")]
        consumed.append((int(offset.removeprefix("Offset:")), key.encode(),
                         None if value == NULL_LITERAL else value.encode(), [(k, v.encode()) for k, v in pairs]))
    return dc.check_roundtrip(consumed)


def compression(codec: str):
    def scenario(bootstrap: str, prefix: str) -> str:
        topic = dc.topic_name(prefix, f"compression_{codec}")
        create_topic(bootstrap, topic)
        expected = [dc.compressible_value(i) for i in range(dc.COMPRESSED_COUNT)]
        produce(bootstrap, topic, [v.decode() for v in expected], "--compression-codec", codec)
        values = [line.encode() for line in consume(bootstrap, topic, len(expected))]
        return dc.check_values(values, expected, codec)
    return scenario


def large_records(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "large_records")
    create_topic(bootstrap, topic)
    # The console tools carry records as lines, so the random bytes travel as hex: 1,000,000 characters each.
    expected = [os.urandom(dc.LARGE_RECORD_BYTES // 2).hex().encode() for _ in range(dc.LARGE_RECORD_COUNT)]
    produce(bootstrap, topic, [v.decode() for v in expected])
    values = [line.encode() for line in consume(bootstrap, topic, len(expected))]
    return dc.check_values(values, expected, "1 MB records")


def reset_and_read_one(bootstrap: str, topic: str, group: str, *reset: str) -> int:
    """Reset group's offset on partition 0 as kafka-consumer-groups says, then read one record through the group."""
    kt.run("consumer-groups", "--bootstrap-server", bootstrap, "--group", group, "--topic", f"{topic}:0",
           "--reset-offsets", *reset, "--execute")
    proc = kt.run("console-consumer", "--bootstrap-server", bootstrap, "--topic", topic, "--group", group,
                  "--max-messages", "1", "--timeout-ms", TIMEOUT_MS,
                  "--formatter-property", "print.offset=true", "--formatter-property", "print.value=false")
    lines = [line for line in proc.stdout.splitlines() if line.startswith("Offset:")]
    expect(len(lines) == 1, f"the group's consumer printed {proc.stdout!r}")
    return int(lines[0].removeprefix("Offset:").split()[0])


def seek(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "seek")
    group = dc.topic_name(prefix, "seek", "group")
    create_topic(bootstrap, topic)
    half = dc.RECORD_COUNT // 2
    produce(bootstrap, topic, [f"v{i}" for i in range(half)])
    time.sleep(1.0)
    # --to-datetime reads local time in the JVM's zone, which is this process's zone too.
    between = datetime.now().strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
    time.sleep(1.0)
    produce(bootstrap, topic, [f"v{i}" for i in range(half, dc.RECORD_COUNT)])
    first = reset_and_read_one(bootstrap, topic, group, "--to-earliest")
    expect(first == 0, f"after reset to earliest read offset {first}")
    at_time = reset_and_read_one(bootstrap, topic, group, "--to-datetime", between)
    expect(at_time == half, f"after reset to {between} read offset {at_time}")
    kt.run("consumer-groups", "--bootstrap-server", bootstrap, "--group", group, "--topic", f"{topic}:0",
           "--reset-offsets", "--to-latest", "--execute")
    produce(bootstrap, topic, ["after-end"])
    after_end = reset_and_read_one(bootstrap, topic, group, "--shift-by", "0")
    expect(after_end == dc.RECORD_COUNT, f"after reset to latest read offset {after_end}")
    return f"beginning -> 0, timestamp -> {at_time}, end -> {after_end} (offsets reset with kafka-consumer-groups)"


def describe_members(bootstrap: str, group: str) -> list[set[int]]:
    """Each member's assigned partitions, from kafka-consumer-groups --describe --members --verbose.

    Kafka 4.x prints them as CURRENT-ASSIGNMENT `topic:0,1`; older releases as ASSIGNMENT `topic(0,1)`.
    """
    proc = kt.run("consumer-groups", "--bootstrap-server", bootstrap, "--describe", "--group", group, "--members",
                  "--verbose", check=False)
    members = []
    for row in table(proc.stdout):
        assignment = row.get("CURRENT-ASSIGNMENT", row.get("ASSIGNMENT", "-"))
        partitions = re.sub(r"^[^:(]*[:(]", "", assignment).rstrip(")") if assignment != "-" else ""
        members.append({int(p) for p in partitions.split(",") if p.strip().isdigit()})
    return members


def consumer_group(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "consumer_group")
    group = dc.topic_name(prefix, "consumer_group", "group")
    create_topic(bootstrap, topic, dc.GROUP_PARTITIONS)
    # Round robin over the 4 partitions: 10 records on each, as in the other clients' group scenario.
    lines = [f"{p}-{i}" for p in range(dc.GROUP_PARTITIONS) for i in range(dc.GROUP_RECORDS_PER_PARTITION)]
    produce(bootstrap, topic, lines, "--producer-property",
            "partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner")
    consume_args = ("--bootstrap-server", bootstrap, "--topic", topic, "--group", group, "--from-beginning",
                    "--consumer-property", "auto.commit.interval.ms=200")
    a = kt.Background("console-consumer", *consume_args)
    b = None
    try:
        dc.wait_until(lambda: describe_members(bootstrap, group) == [set(range(dc.GROUP_PARTITIONS))],
                      "A to get all 4 partitions")
        b = kt.Background("console-consumer", *consume_args)
        members: list[set[int]] = []

        def split_two_and_two() -> bool:
            members[:] = describe_members(bootstrap, group)
            return sorted(map(len, members)) == [2, 2] and not members[0] & members[1]

        dc.wait_until(split_two_and_two, "the rebalance to 2+2")
        total = len(lines)
        # At least once: records A read but had not committed when B joined may be read again by B.
        dc.wait_until(lambda: set(a.lines + b.lines) >= set(lines), f"all {total} records")
        time.sleep(0.5)
    finally:
        for member in (a, b):
            if member:
                member.stop()
    described = kt.run("consumer-groups", "--bootstrap-server", bootstrap, "--describe", "--group", group).stdout
    offsets = {int(r["PARTITION"]): r["CURRENT-OFFSET"] for r in table(described) if r.get("TOPIC") == topic}
    expect(offsets == {p: str(dc.GROUP_RECORDS_PER_PARTITION) for p in range(dc.GROUP_PARTITIONS)},
           f"committed offsets {offsets}")
    split = sorted(sorted(m) for m in members)
    return f"A: 4 partitions, then {split[0]} + {split[1]}; {total} records; committed 10 on each partition"


def admin(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "admin")
    create_topic(bootstrap, topic, 3, "--config", f"retention.ms={dc.RETENTION_MS}")
    again = kt.run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic, "--partitions", "3",
                   "--replication-factor", "1", check=False)
    expect(again.returncode != 0 and "already exists" in again.stdout + again.stderr,
           f"creating the topic again: exit {again.returncode} {(again.stdout + again.stderr)[-300:]}")
    described = kt.run("topics", "--bootstrap-server", bootstrap, "--describe", "--topic", topic).stdout
    expect("PartitionCount: 3" in described and f"retention.ms={dc.RETENTION_MS}" in described,
           f"describe shows {described[:400]}")
    configs = kt.run("configs", "--bootstrap-server", bootstrap, "--describe", "--entity-type", "topics",
                     "--entity-name", topic, "--all").stdout
    entries = {line.split("=", 1)[0].strip(): line.split("=", 1)[1].split()[0]
               for line in configs.splitlines() if "=" in line and "sensitive=" in line}
    expect(entries.get("retention.ms") == dc.RETENTION_MS, f"retention.ms = {entries.get('retention.ms')}")
    expect(entries.get("cleanup.policy") == "delete", f"cleanup.policy = {entries.get('cleanup.policy')}")
    kt.run("topics", "--bootstrap-server", bootstrap, "--delete", "--topic", topic)
    dc.wait_until(lambda: topic not in kt.run("topics", "--bootstrap-server", bootstrap, "--list").stdout.split(),
                  "the deleted topic to leave the topic list")
    return f"created, duplicate refused, 3 partitions, retention.ms={dc.RETENTION_MS} (kafka-configs), deleted"


def secured(scenario: str):
    """The sasl_scram and tls cells: kafka-topics creates the topic and the console producer and consumer carry 10
    records, all through the secured listener, configured by a --command-config properties file."""
    def run(bootstrap: str, prefix: str) -> str:
        settings = dc.java_security_settings(scenario)
        secured_bootstrap, config = settings["bootstrap.servers"], kt.properties_file(settings)
        topic = dc.topic_name(prefix, scenario)
        create_topic(secured_bootstrap, topic, 1, "--command-config", config)
        expected = dc.secured_values()
        produce(secured_bootstrap, topic, [v.decode() for v in expected], "--command-config", config)
        consumed = consume(secured_bootstrap, topic, len(expected), "--command-config", config)
        return dc.check_values([line.encode() for line in consumed], expected,
                               f"{scenario} ({settings['security.protocol']})")
    return run


dc.run({
    "metadata": metadata,
    "roundtrip": roundtrip,
    **{f"compression_{codec}": compression(codec) for codec in ("gzip", "snappy", "lz4", "zstd")},
    "large_records": large_records,
    "seek": seek,
    "consumer_group": consumer_group,
    "admin": admin,
    "sasl_scram": secured("sasl_scram"),
    "tls": secured("tls"),
})
