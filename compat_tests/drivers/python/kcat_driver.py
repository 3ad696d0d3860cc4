"""The kcat driver of the matrix: each scenario drives the kcat binary ($KCAT) as a user would from a shell.

kcat (Debian's, librdkafka 2.0.2) cannot create topics: its topics are auto-created by the broker on the Metadata
request kcat makes before producing (Kafka auto-creates on Metadata, never on Produce), with the broker's
num.partitions, and the scenarios write to partition 0. It has no admin commands, so it has no admin cell, and no
compacted cell: it can write keys (-K) and tombstones (-Z), but the topics it auto-creates take the broker's
cleanup.policy (delete) and it cannot set a topic's config.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time

import driver_common as dc
from driver_common import expect

KCAT = os.environ.get("KCAT", "kcat")
KCAT_TIMEOUT_S = 60
# librdkafka's message.max.bytes (1,000,000) bounds a request; a 1,000,000-byte record needs a little more.
LARGE_MESSAGE_MAX_BYTES = 1_048_576
# kcat's balanced consumer commits automatically; commit often so the committed offsets are current at exit.
GROUP_COMMIT_INTERVAL_MS = 100
ASSIGNED = re.compile(r"rebalanced \(memberid [^)]*\): assigned: (.*)")


def kcat(bootstrap: str, *args: str, stdin: str | None = None, timeout: float = KCAT_TIMEOUT_S) -> str:
    proc = subprocess.run([KCAT, "-b", bootstrap, *args], input=stdin, capture_output=True, text=True,
                          timeout=timeout)
    expect(proc.returncode == 0, f"kcat {' '.join(args[:6])} exited {proc.returncode}: {proc.stderr[-400:]}")
    return proc.stdout


def ensure_topic(bootstrap: str, topic: str, *args: str) -> dict:
    """Metadata for topic (auto-created by the broker on the first request), once every partition has a leader."""
    until = dc.deadline()
    while True:
        meta = json.loads(kcat(bootstrap, "-L", "-J", "-t", topic, *args))
        partitions = meta["topics"][0]["partitions"]
        if partitions and all(p["leader"] >= 0 for p in partitions):
            return meta
        expect(not dc.past(until), f"topic {topic} never got leaders: {meta['topics'][0]}")
        time.sleep(0.2)


def consume_json(bootstrap: str, topic: str, *args: str) -> list[dict]:
    """Partition 0 of topic from the beginning (unless args say otherwise) to its end, as kcat's JSON envelopes."""
    out = kcat(bootstrap, "-C", "-t", topic, "-p", "0", "-e", "-J", "-o", "beginning", *args)
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def produce_lines(bootstrap: str, topic: str, lines: list[str], *args: str) -> None:
    kcat(bootstrap, "-P", "-t", topic, "-p", "0", *args, stdin="".join(line + "\n" for line in lines))


def metadata(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "metadata")
    meta = ensure_topic(bootstrap, topic, "-X", f"client.id={dc.metadata_client_id(prefix)}")
    brokers = meta["brokers"]
    expect(len(brokers) == 1, f"expected 1 broker, metadata lists {len(brokers)}")
    expect(brokers[0]["name"] == bootstrap, f"broker at {brokers[0]['name']}, not {bootstrap}")
    partitions = meta["topics"][0]["partitions"]
    leaders = {p["leader"] for p in partitions}
    expect(leaders == {brokers[0]["id"]}, f"partition leaders {leaders}")
    return (f"1 broker (node {brokers[0]['id']} at {brokers[0]['name']}); {topic} auto-created on Metadata with "
            f"{len(partitions)} partitions led by it")


def roundtrip(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "roundtrip")
    ensure_topic(bootstrap, topic)
    # -H applies to every record of one kcat run, and the headers differ per record: one run per record.
    for key, value, headers in dc.roundtrip_records():
        header_args = [arg for name, val in headers for arg in ("-H", f"{name}={val.decode()}")]
        produce_lines(bootstrap, topic, [f"{key.decode()}:{(value or b'').decode()}"], "-K", ":", "-Z", *header_args)
    records = consume_json(bootstrap, topic)
    consumed = []
    for r in records:
        pairs = r.get("headers") or []
        headers = [(pairs[i], (pairs[i + 1] or "").encode()) for i in range(0, len(pairs), 2)]
        value = None if r["payload"] is None else r["payload"].encode()
        consumed.append((r["offset"], r["key"].encode(), value, headers))
    return dc.check_roundtrip(consumed)


def compression(codec: str):
    def scenario(bootstrap: str, prefix: str) -> str:
        topic = dc.topic_name(prefix, f"compression_{codec}")
        ensure_topic(bootstrap, topic)
        expected = [dc.compressible_value(i) for i in range(dc.COMPRESSED_COUNT)]
        produce_lines(bootstrap, topic, [v.decode() for v in expected], "-z", codec, "-X", "linger.ms=20")
        records = consume_json(bootstrap, topic)
        return dc.check_values([r["payload"].encode() for r in records], expected, codec)
    return scenario


def large_records(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "large_records")
    ensure_topic(bootstrap, topic)
    # kcat reads records as lines, so the random bytes travel as hex: 1,000,000 characters each.
    expected = [os.urandom(dc.LARGE_RECORD_BYTES // 2).hex().encode() for _ in range(dc.LARGE_RECORD_COUNT)]
    produce_lines(bootstrap, topic, [v.decode() for v in expected],
                  "-X", f"message.max.bytes={LARGE_MESSAGE_MAX_BYTES}")
    records = consume_json(bootstrap, topic)
    return dc.check_values([r["payload"].encode() for r in records], expected, "1 MB records")


def first_offset(bootstrap: str, topic: str, start: str) -> int:
    out = kcat(bootstrap, "-C", "-t", topic, "-p", "0", "-c", "1", "-J", "-o", start)
    return json.loads(out)["offset"]


def seek(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "seek")
    ensure_topic(bootstrap, topic)
    # kcat cannot set record timestamps: the two halves are produced a second apart around a known instant.
    half = dc.RECORD_COUNT // 2
    produce_lines(bootstrap, topic, [f"v{i}" for i in range(half)])
    time.sleep(1.0)
    between = int(time.time() * 1000)
    time.sleep(1.0)
    produce_lines(bootstrap, topic, [f"v{i}" for i in range(half, dc.RECORD_COUNT)])
    first = first_offset(bootstrap, topic, "beginning")
    expect(first == 0, f"after seek to beginning read offset {first}")
    at_time = first_offset(bootstrap, topic, f"s@{between}")
    expect(at_time == half, f"after seek to timestamp read offset {at_time}")
    reader = subprocess.Popen([KCAT, "-b", bootstrap, "-C", "-t", topic, "-p", "0", "-c", "1", "-J", "-o", "end"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)  # let the reader resolve the end offset before the new record lands
    produce_lines(bootstrap, topic, ["after-end"])
    out, err = reader.communicate(timeout=KCAT_TIMEOUT_S)
    expect(reader.returncode == 0 and out.strip(), f"reader at end got nothing: {err[-300:]}")
    after_end = json.loads(out)["offset"]
    expect(after_end == dc.RECORD_COUNT, f"after seek to end read offset {after_end}")
    return f"beginning -> 0, timestamp -> {at_time}, end -> {after_end}"


def idempotent(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "idempotent")
    ensure_topic(bootstrap, topic)
    expected = [f"idempotent-{i}".encode() for i in range(dc.IDEMPOTENT_COUNT)]
    produce_lines(bootstrap, topic, [v.decode() for v in expected], "-X", "enable.idempotence=true", "-X", "acks=all")
    records = consume_json(bootstrap, topic)  # to the end: anything beyond the 500 would be a duplicate
    return dc.check_values([r["payload"].encode() for r in records], expected, "idempotent")


class GroupMember:
    """A `kcat -G` balanced consumer; its assignment is read from the rebalance lines it prints on stderr."""

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        self.proc = subprocess.Popen(
            [KCAT, "-b", bootstrap, "-G", group, "-J", "-u", "-X", "auto.offset.reset=earliest",
             "-X", f"auto.commit.interval.ms={GROUP_COMMIT_INTERVAL_MS}", topic],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.seen: set[tuple[int, int]] = set()
        self.assignment: set[int] = set()
        threading.Thread(target=self._read_records, daemon=True).start()
        threading.Thread(target=self._read_rebalances, daemon=True).start()

    def _read_records(self) -> None:
        for line in self.proc.stdout:
            if line.strip():
                record = json.loads(line)
                self.seen.add((record["partition"], record["offset"]))

    def _read_rebalances(self) -> None:
        for line in self.proc.stderr:
            found = ASSIGNED.search(line)
            if found:
                self.assignment = {int(p) for p in re.findall(r"\[(\d+)\]", found.group(1))}
            elif "revoked:" in line:
                self.assignment = set()

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)  # kcat closes the consumer, which commits the final offsets
        self.proc.wait(KCAT_TIMEOUT_S)


def consumer_group(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "consumer_group")
    group = dc.topic_name(prefix, "consumer_group", "group")
    partitions = len(ensure_topic(bootstrap, topic)["topics"][0]["partitions"])
    expect(partitions == dc.GROUP_PARTITIONS, f"auto-created topic has {partitions} partitions, the scenario needs "
                                              f"{dc.GROUP_PARTITIONS} (broker num.partitions)")
    for p in range(partitions):
        kcat(bootstrap, "-P", "-t", topic, "-p", str(p),
             stdin="".join(f"{p}-{i}\n" for i in range(dc.GROUP_RECORDS_PER_PARTITION)))
    a = GroupMember(bootstrap, topic, group)
    b = None
    try:
        dc.wait_until(lambda: a.assignment == set(range(partitions)), "A to get all 4 partitions")
        b = GroupMember(bootstrap, topic, group)
        dc.wait_until(lambda: len(a.assignment) == 2 and len(b.assignment) == 2
                      and not a.assignment & b.assignment, "the rebalance to 2+2")
        split = (sorted(a.assignment), sorted(b.assignment))
        total = partitions * dc.GROUP_RECORDS_PER_PARTITION
        dc.wait_until(lambda: len(a.seen | b.seen) == total, f"all {total} records")
        time.sleep(2 * GROUP_COMMIT_INTERVAL_MS / 1000)
    finally:
        for member in (a, b):
            if member:
                member.stop()
    # The committed offsets, seen as kcat sees them: a new member of the group starts after them and finds nothing.
    late = subprocess.run([KCAT, "-b", bootstrap, "-G", group, "-J", "-e", "-X", "auto.offset.reset=earliest", topic],
                          capture_output=True, text=True, timeout=KCAT_TIMEOUT_S)
    leftover = [line for line in late.stdout.splitlines() if line.strip()]
    expect(late.returncode == 0 and not leftover,
           f"a later member of the group read {len(leftover)} records (offsets not committed): {late.stderr[-300:]}")
    return (f"A: 4 partitions, then A {split[0]} + B {split[1]}; {total} records; a later member found nothing "
            f"left (offsets committed)")


def secured(scenario: str, bootstrap_variable: str, settings: dict[str, str]):
    """A secured listener's cell: 10 records through it (compat_tests/security_listeners.py)."""
    def run(bootstrap: str, prefix: str) -> str:
        topic = dc.topic_name(prefix, scenario)
        ensure_topic(bootstrap, topic)
        options = [arg for key, value in settings.items() for arg in ("-X", f"{key}={value}")]
        secured_bootstrap = os.environ.get(bootstrap_variable, "")
        expected = [f"secret-{i}" for i in range(dc.RECORD_COUNT)]
        produce_lines(secured_bootstrap, topic, expected, *options)
        got = [m["payload"] for m in consume_json(secured_bootstrap, topic, *options)]
        return dc.check_values([g.encode() for g in got], [e.encode() for e in expected], scenario)
    return run


dc.run({
    "metadata": metadata,
    "roundtrip": roundtrip,
    **{f"compression_{codec}": compression(codec) for codec in ("gzip", "snappy", "lz4", "zstd")},
    "large_records": large_records,
    "seek": seek,
    "idempotent": idempotent,
    "consumer_group": consumer_group,
    # No sasl_scram: Debian's librdkafka 2.0.2 sends its client nonce twice in the client-final message, which
    # Apache Kafka 4.3.1 refuses as wirebroker does (the CVE-2024-56128 check; librdkafka fixed it later).
    "tls": secured("tls", "COMPAT_TLS_BOOTSTRAP", {"security.protocol": "SSL",
                                                   "ssl.ca.location": os.environ.get("COMPAT_TLS_CA", "")}),
})
