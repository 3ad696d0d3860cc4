"""What every Python driver shares: the command line, the JSON result lines, and the scenarios' data.

A driver is run as `python DRIVER.py SCENARIOS BOOTSTRAP TOPIC_PREFIX` where SCENARIOS is a comma-separated list
of scenario names (compat_tests/scenarios.py). For each it prints one line of JSON to stdout and flushes it:
    {"scenario": "roundtrip", "ok": true, "detail": "10 records ...", "seconds": 0.42}
A scenario the driver does not know prints ok=false with detail "not implemented". Logging goes to stderr.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from typing import Callable

RECORD_COUNT = 10
COMPRESSED_COUNT = 200
LARGE_RECORD_BYTES = 1_000_000
LARGE_RECORD_COUNT = 3
IDEMPOTENT_COUNT = 500
GROUP_PARTITIONS = 4
GROUP_RECORDS_PER_PARTITION = 10
SEEK_STEP_MS = 1000
SEEK_TARGET_INDEX = 5
RETENTION_MS = "3600000"
FAILOVER_COUNT = 300
FAILOVER_PARTITIONS = 3
FAILOVER_REPLICAS = 3
FAILOVER_MIN_ISR = "2"
# The producer's whole budget for the records sent across the kill (its delivery.timeout.ms is 120 s).
FAILOVER_FLUSH_S = 120.0
# Long enough for a group rebalance with default session timeouts on a loaded 2-core machine.
SCENARIO_DEADLINE_S = 60.0
# The transactions scenario: one committed and one aborted transaction, the zombie's open one, the successor's.
TXN_COMMITTED, TXN_ABORTED, TXN_ZOMBIE, TXN_SUCCESSOR = b"committed", b"aborted", b"zombie", b"successor"
# The compacted scenario: a topic whose segments roll at every append after segment.ms, cleaned as soon as it has any
# dirt, tombstones kept 1 s after their first cleaning; KEYS keys written ROUNDS times, the last DELETED of them then
# deleted, and one filler record per FILLER_INTERVAL_S (rolling a segment, so that the cleaner finds dirt again)
# until the log holds the table.
COMPACTED_CONFIG = {"cleanup.policy": "compact", "segment.ms": "100", "min.cleanable.dirty.ratio": "0.01",
                    "delete.retention.ms": "1000"}
COMPACTED_KEYS, COMPACTED_ROUNDS, COMPACTED_DELETED = 20, 5, 5
COMPACTED_FILLER_KEY = b"filler"
COMPACTED_FILLER_INTERVAL_S = 0.5
# Two cleanings are needed (the first gives the tombstones their delete horizon, a later one removes them), each
# after up to log.cleaner.backoff.ms (15 s by default on both brokers): about 30 s; the rest is for a loaded machine.
COMPACTED_DEADLINE_S = 120.0


class ScenarioFailed(AssertionError):
    """A scenario's check did not hold; the message is what the report shows on hover."""


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise ScenarioFailed(message)


def roundtrip_records() -> list[tuple[bytes, bytes | None, list[tuple[str, bytes]]]]:
    """(key, value, headers) for the roundtrip scenario: every third value is null, one header is empty."""
    return [(f"key-{i}".encode(), None if i % 3 == 2 else f"value-{i}".encode(),
             [("trace", f"t-{i}".encode()), ("empty", b"")]) for i in range(RECORD_COUNT)]


def compressible_value(i: int) -> bytes:
    return (f"compressible-{i:05d}-" * 20).encode()


def topic_name(prefix: str, scenario: str, suffix: str = "") -> str:
    return f"{prefix}.{scenario}{'.' + suffix if suffix else ''}"


def metadata_client_id(prefix: str) -> str:
    """The client id of the metadata scenario's clients: the matrix finds their requests by it in both brokers'
    request logs and compares the versions they used (compat_tests/negotiated.py)."""
    return f"{prefix}.metadata"


def deadline(seconds: float = SCENARIO_DEADLINE_S) -> float:
    return time.monotonic() + seconds


def past(when: float) -> bool:
    return time.monotonic() > when


def check_roundtrip(consumed: list[tuple[int, bytes | None, bytes | None, list[tuple[str, bytes]]]]) -> str:
    """Compare (offset, key, value, headers) tuples with roundtrip_records(); header values as bytes (None=b'')."""
    expected = roundtrip_records()
    expect(len(consumed) == len(expected), f"consumed {len(consumed)} records, expected {len(expected)}")
    for i, ((offset, key, value, headers), (ekey, evalue, eheaders)) in enumerate(zip(consumed, expected, strict=True)):
        expect(offset == i, f"record {i} has offset {offset}")
        expect(key == ekey, f"record {i}: key {key!r} != {ekey!r}")
        expect(value == evalue, f"record {i}: value {value!r} != {evalue!r}")
        got = [(k, v if v is not None else b"") for k, v in headers]
        expect(got == eheaders, f"record {i}: headers {got!r} != {eheaders!r}")
    return f"{len(consumed)} records: keys, {sum(v is None for _, v, _ in expected)} null values, headers intact"


def check_values(values: list[bytes | None], expected: list[bytes], what: str) -> str:
    expect(len(values) == len(expected), f"{what}: consumed {len(values)} records, expected {len(expected)}")
    for i, (got, want) in enumerate(zip(values, expected, strict=True)):
        expect(got == want, f"{what}: record {i} differs ({(got or b'')[:40]!r}... != {want[:40]!r}...)")
    return f"{what}: {len(values)} records intact and in order"


def java_security_settings(scenario: str) -> dict[str, str]:
    """The Java client's settings for a sasl_scram or tls cell's listener (compat_tests/security_listeners.py), for
    the drivers that configure Kafka's Java client by its keys: Kafka's tools (properties files) and Spark (kafka.*)."""
    if scenario == "sasl_scram":
        return {"bootstrap.servers": os.environ["COMPAT_SASL_BOOTSTRAP"], "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
                                    f'username="{os.environ["COMPAT_SCRAM_USER"]}" '
                                    f'password="{os.environ["COMPAT_SCRAM_PASSWORD"]}";'}
    expect(scenario == "tls", f"{scenario} is not a secured scenario")
    # A PEM truststore (KIP-651): the CA file as it is, no keystore to convert.
    return {"bootstrap.servers": os.environ["COMPAT_TLS_BOOTSTRAP"], "security.protocol": "SSL",
            "ssl.truststore.type": "PEM", "ssl.truststore.location": os.environ["COMPAT_TLS_CA"]}


def secured_values() -> list[bytes]:
    """The records of a sasl_scram or tls cell, as every driver sends them."""
    return [f"secret-{i}".encode() for i in range(RECORD_COUNT)]


def check_transactions(values: list[bytes | None], fenced: str) -> str:
    """What a read_committed consumer read of the transactions scenario's topic: the committed and the successor's
    record only (the aborted and the zombie's are invisible); `fenced` is how the zombie's commit failed."""
    check_values(values, [TXN_COMMITTED, TXN_SUCCESSOR], "read_committed")
    return f"commit visible, abort invisible under read_committed, the zombie fenced ({fenced})"


def compacted_records() -> list[tuple[bytes, bytes | None]]:
    """(key, value) of the compacted scenario, in send order: every key ROUNDS times, then tombstones."""
    updates = [(b"key-%d" % k, b"value-%d-%d" % (k, r)) for r in range(COMPACTED_ROUNDS) for k in range(COMPACTED_KEYS)]
    deletes = [(b"key-%d" % k, None) for k in range(COMPACTED_KEYS - COMPACTED_DELETED, COMPACTED_KEYS)]
    return updates + deletes


def compacted_leftovers(log: list[tuple[bytes | None, bytes | None]]) -> str | None:
    """What in the (key, value) records read from offset 0 (filler aside) is not yet the compacted table, or None."""
    live = {b"key-%d" % k: b"value-%d-%d" % (k, COMPACTED_ROUNDS - 1) for k in range(COMPACTED_KEYS - COMPACTED_DELETED)}
    table = [(key, value) for key, value in log if key != COMPACTED_FILLER_KEY]
    latest = dict(table)
    wrong = {k: v for k, v in live.items() if latest.get(k) != v}
    expect(not wrong, f"keys not at their latest value: {sorted(wrong)[:5]}")  # never true of a table
    if len(table) > len(latest):
        return f"{len(table) - len(latest)} superseded records"
    deleted = sorted(k for k in latest if k not in live)
    return f"{len(deleted)} deleted keys still there" if deleted else None


def compacted_scenario(produce: Callable[[list[tuple[bytes, bytes | None]]], None],
                       read_all: Callable[[], list[tuple[bytes | None, bytes | None]]]) -> str:
    """Write the table, then a filler record at a time until the log read from offset 0 is the table; `produce`
    sends (key, value) records and waits for them, `read_all` reads the partition from offset 0 to its end."""
    started = time.monotonic()
    produce(compacted_records())
    until, fillers = deadline(COMPACTED_DEADLINE_S), 0
    while (leftover := compacted_leftovers(read_all())) is not None:
        expect(not past(until), f"not compacted after {fillers} filler segments: {leftover}")
        time.sleep(COMPACTED_FILLER_INTERVAL_S)
        produce([(COMPACTED_FILLER_KEY, b"%d" % fillers)])
        fillers += 1
    live = COMPACTED_KEYS - COMPACTED_DELETED
    return (f"{live} keys at their latest value only, {COMPACTED_DELETED} deleted keys gone, after "
            f"{time.monotonic() - started:.0f} s ({fillers} filler segments)")


def wait_until(condition: Callable[[], object], what: str) -> None:
    until = deadline()
    while not condition():
        if past(until):
            raise ScenarioFailed(f"timed out waiting for {what}")
        time.sleep(0.1)


def failover_records() -> list[tuple[int, bytes]]:
    """(partition, value) for the failover scenario, in send order: record i goes to partition i mod 3."""
    return [(i % FAILOVER_PARTITIONS, f"failover-{i}".encode()) for i in range(FAILOVER_COUNT)]


def kill_leader_and_wait(topic: str) -> str:
    """The driver's half of the failover handshake: ask the runner to kill -9 partition 0's leader, wait for it.

    Writes `ready` (the topic) in $COMPAT_FAILOVER_DIR and waits for `killed` (the node id the runner killed).
    """
    handshake = os.environ.get("COMPAT_FAILOVER_DIR")
    expect(handshake is not None, "COMPAT_FAILOVER_DIR is not set: failover runs on a three-broker cluster only")
    tmp = os.path.join(handshake, "ready.tmp")
    with open(tmp, "w") as out:
        out.write(topic)
    os.replace(tmp, os.path.join(handshake, "ready"))
    killed = os.path.join(handshake, "killed")
    wait_until(lambda: os.path.exists(killed), "the runner to kill the leader")
    with open(killed) as handle:
        node = handle.read().strip()
    expect(node != "-1", "the runner found no leader to kill")
    return node


def check_failover(consumed: list[tuple[int, bytes]], end_offsets: dict[int, int], killed: str) -> str:
    """Every record exactly once and in order on each partition, and no log longer than that (no duplicates)."""
    expected: dict[int, list[bytes]] = {p: [] for p in range(FAILOVER_PARTITIONS)}
    for partition, value in failover_records():
        expected[partition].append(value)
    got: dict[int, list[bytes]] = {p: [] for p in range(FAILOVER_PARTITIONS)}
    for partition, value in consumed:
        got[partition].append(value)
    for partition in range(FAILOVER_PARTITIONS):
        check_values(got[partition], expected[partition], f"partition {partition}")
    want_ends = {p: len(v) for p, v in expected.items()}
    expect(end_offsets == want_ends, f"log end offsets {end_offsets}, expected {want_ends} (duplicates?)")
    return (f"broker {killed} (leader of partition 0) killed after {FAILOVER_COUNT // 2} records; all "
            f"{FAILOVER_COUNT} read back once, in order on each of {FAILOVER_PARTITIONS} partitions")


def group_records() -> list[tuple[int, bytes]]:
    """(partition, value) for the consumer_group scenario: the same count on each partition."""
    return [(p, f"{p}-{i}".encode()) for p in range(GROUP_PARTITIONS) for i in range(GROUP_RECORDS_PER_PARTITION)]


class GroupMember(threading.Thread):
    """One consumer of the group, polling and committing in its own thread until stopped.

    A client's subclass opens the consumer in __init__ and implements poll_once() (poll, record (partition,
    offset) pairs in self.seen, commit), assigned_partitions() and close().
    """

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.seen: set[tuple[int, int]] = set()
        self.assignment: set[int] = set()
        self.stopping = threading.Event()
        self.error: Exception | None = None

    def poll_once(self) -> None:
        raise NotImplementedError

    def assigned_partitions(self) -> set[int]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def run(self) -> None:
        try:
            while not self.stopping.is_set():
                self.poll_once()
                self.assignment = self.assigned_partitions()
            self.close()
        except Exception as exc:  # reported by group_scenario
            self.error = exc


def group_scenario(new_member: Callable[[], GroupMember], committed_offsets: Callable[[], dict[int, int]]) -> str:
    """A joins and gets every partition; B joins and the group splits 2+2; all records consumed and committed."""
    a = new_member()
    a.start()
    wait_until(lambda: a.assignment == set(range(GROUP_PARTITIONS)) or a.error, "A to get all 4 partitions")
    b = new_member()
    b.start()
    total = GROUP_PARTITIONS * GROUP_RECORDS_PER_PARTITION
    wait_until(lambda: (len(a.assignment) == 2 and len(b.assignment) == 2 and not a.assignment & b.assignment)
               or a.error or b.error, "the rebalance to 2+2")
    split = (sorted(a.assignment), sorted(b.assignment))
    wait_until(lambda: len(a.seen | b.seen) == total or a.error or b.error, f"all {total} records")
    time.sleep(0.5)  # one more poll+commit round in each member
    for member in (a, b):
        member.stopping.set()
        member.join(30)
        expect(member.error is None, f"member failed: {member.error!r}")
    offsets = committed_offsets()
    expect(offsets == {p: GROUP_RECORDS_PER_PARTITION for p in range(GROUP_PARTITIONS)},
           f"committed offsets {offsets}")
    return f"A: 4 partitions, then A {split[0]} + B {split[1]}; {total} records; committed 10 on each partition"


def core_scenarios(compression: Callable[[str], Callable[[str, str], str]],
                   **named: Callable[[str, str], str]) -> dict[str, Callable[[str, str], str]]:
    """The scenario table of a driver that expresses the core scenarios: one compression cell per codec."""
    table = dict(named)
    admin = table.pop("admin", None)
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        table[f"compression_{codec}"] = compression(codec)
    if admin:
        table["admin"] = admin
    return table


def where(exc: BaseException) -> str:
    """ " (driver.py:123)": the last line of a driver (not of this module) that the failure passed through."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if os.path.dirname(f.filename) == os.path.dirname(__file__) and f.filename != __file__]
    return f" ({os.path.basename(frames[-1].filename)}:{frames[-1].lineno})" if frames else ""


def run(scenarios: dict[str, Callable[[str, str], str]]) -> None:
    """Parse argv, run each requested scenario with (bootstrap, prefix), print one JSON line per scenario."""
    names, bootstrap, prefix = sys.argv[1].split(","), sys.argv[2], sys.argv[3]
    for name in names:
        started = time.monotonic()
        func = scenarios.get(name)
        if func is None:
            ok, detail = False, "not implemented"
        else:
            try:
                ok, detail = True, func(bootstrap, prefix)
            except Exception as exc:  # any failure of the client is this cell's result
                ok = False
                detail = f"{type(exc).__name__}: {exc}{where(exc)}"
                traceback.print_exc(file=sys.stderr)
        print(json.dumps({"scenario": name, "ok": ok, "detail": detail,
                          "seconds": round(time.monotonic() - started, 2)}), flush=True)
    sys.stdout.flush()
    # Some clients leave non-daemon threads behind; the results are out, so leave now.
    os._exit(0)
