"""The versions each client negotiates, read from both brokers' request logs and compared, for the metadata cells.

Each driver's metadata scenario gives the clients that list the cluster the client id `<prefix>.metadata`
(drivers/python/driver_common.py metadata_client_id, and its twins in the Go, Java and Node drivers), but for the one
tool that names its client itself (FIXED_CLIENT_IDS). Both brokers
of the matrix log every request they answer: wirebroker through its `wirebroker.request` logger (into broker.log),
Apache Kafka through `kafka.request.logger` (into requests.log). After the cells have run, the APIs and versions a
client used against wirebroker must be the ones it used against Kafka 4.3.1: a client that picks another version here
means our ApiVersions, or what the client infers from it, differs from Kafka's.
"""
from __future__ import annotations

import ast
import json
import re
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path

from compat_tests.results import Cell
from wirebroker.protocol.messages import API_SPECS

REFERENCE = "kafka"
COMPARED = "wirebroker"
SCENARIO = "metadata"
# Kafka's BrokerApiVersionsCommand names its client admin-<n> from a counter of its own, whatever client.id says;
# the kafka-verifiable driver runs it once in its tool JVM, in its metadata scenario, and no other driver runs it.
FIXED_CLIENT_IDS = {"kafka-verifiable": "admin-1"}
KAFKA_PREFIX = "Completed request:"
_WIREBROKER_LINE = re.compile(r"Completed request: (?P<api>\w+) v(?P<version>\d+) \(correlation id -?\d+, "
                              r"client id (?P<client_id>None|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\)")
_API_NAMES = {spec.name: key for key, spec in API_SPECS.items()}

Used = frozenset[tuple[int, int]]  # (API key, version) pairs


def client_id(client: str, prefix: str) -> str:
    """The client id a client's metadata scenario sends its requests with, in a run whose driver had `prefix`."""
    return FIXED_CLIENT_IDS.get(client, f"{prefix}.{SCENARIO}")


def wirebroker_requests(log_path: Path, client_ids: Collection[str]) -> Iterator[tuple[str | None, int, int]]:
    """(client id, API key, version) of the requests in wirebroker's log (wirebroker/server/request_log.py) sent by
    one of `client_ids`."""
    for line in _lines(log_path, [repr(cid) for cid in client_ids]):
        match = _WIREBROKER_LINE.search(line)
        if match is not None and match["api"] in _API_NAMES:
            sender = None if match["client_id"] == "None" else ast.literal_eval(match["client_id"])
            if sender in client_ids:
                yield sender, _API_NAMES[match["api"]], int(match["version"])


def kafka_requests(log_path: Path, client_ids: Collection[str]) -> Iterator[tuple[str | None, int, int]]:
    """(client id, API key, version) of the requests in Kafka's request log sent by one of `client_ids`, its own
    controller's left out. Each line is a whole request and response in JSON: only those naming one are parsed."""
    for line in _lines(log_path, [json.dumps(cid) for cid in client_ids]):
        if not line.startswith(KAFKA_PREFIX):
            continue
        try:
            entry = json.loads(line[len(KAFKA_PREFIX):])
            header = entry["requestHeader"]
            if entry.get("listener") == "CONTROLLER" or header.get("clientId") not in client_ids:
                continue
            yield header["clientId"], int(header["requestApiKey"]), int(header["requestApiVersion"])
        except (ValueError, KeyError, TypeError):
            continue  # a line cut short by the broker's stop


def used_by(requests: Iterable[tuple[str | None, int, int]], client_id: str) -> Used:
    return frozenset((key, version) for cid, key, version in requests if cid == client_id)


def describe(used: Used) -> str:
    return ", ".join(f"{API_SPECS[key].name} v{version}" for key, version in sorted(used))


def difference(ours: Used, reference: Used) -> str:
    """What differs between the versions used here and on the reference broker, "" when nothing does."""
    only_here, only_there = ours - reference, reference - ours
    parts = []
    if only_here:
        parts.append(f"only on wirebroker: {describe(only_here)}")
    if only_there:
        parts.append(f"only on Apache Kafka: {describe(only_there)}")
    return "; ".join(parts)


def check_metadata_cells(cells: list[Cell], logs: dict[str, Iterable[tuple[str | None, int, int]]],
                         client_ids: dict[str, str]) -> list[Cell]:
    """The cells with each passing metadata cell judged on its client's versions too.

    logs: broker key -> its requests (both keys present, or nothing is compared); client_ids: client -> the client id
    of its metadata scenario (`client_id`). A metadata cell whose client id is absent from its broker's log is red
    (the driver did not name its client); wirebroker's is red when its versions differ from those used on Kafka.
    """
    if set(logs) != {COMPARED, REFERENCE}:
        return cells
    requests = {broker: list(entries) for broker, entries in logs.items()}
    used: dict[tuple[str, str], Used] = {}
    for cell in cells:
        if cell.scenario == SCENARIO and cell.broker in requests and cell.client in client_ids:
            used[cell.broker, cell.client] = used_by(requests[cell.broker], client_ids[cell.client])
    return [_judged(cell, used) for cell in cells]


def _judged(cell: Cell, used: dict[tuple[str, str], Used]) -> Cell:
    if (cell.broker, cell.client) not in used or not cell.ok:
        return cell
    mine = used[cell.broker, cell.client]
    if not mine:
        return _with(cell, False, "no request from the scenario's client id in the broker's request log")
    if cell.broker == REFERENCE:
        return _with(cell, True, f"versions: {describe(mine)}")
    reference = used.get((REFERENCE, cell.client))
    if not reference:
        return _with(cell, True, f"versions: {describe(mine)} (not compared: no Apache Kafka cell to compare with)")
    differs = difference(mine, reference)
    if differs:
        return _with(cell, False, f"negotiated versions differ from Apache Kafka 4.3.1's: {differs}")
    return _with(cell, True, f"versions as on Apache Kafka 4.3.1: {describe(mine)}")


def _with(cell: Cell, ok: bool, note: str) -> Cell:
    return Cell(cell.broker, cell.client, cell.scenario, ok, f"{cell.detail}; {note}", cell.seconds)


def _lines(path: Path, quoted_ids: list[str]) -> Iterator[str]:
    """The lines of the file that hold one of the client ids, as the log writes them (quoted)."""
    try:
        with open(path, errors="replace") as lines:
            yield from (line for line in lines if any(quoted in line for quoted in quoted_ids))
    except FileNotFoundError:
        return
