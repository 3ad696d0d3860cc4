"""`python -m wirebroker.protocol.codegen.sync`: refresh schemas/ from the Kafka jars pinned in schemas/jars.json.

Keeps the schema facts (names, types, versions, tags, defaults) and drops upstream comments and `about` prose, so
no upstream text enters the project. The specs come from Kafka 4.3.1's jars; for the versions Kafka 4 removed and
this broker still serves, kafka-clients 3.9.2's specs are merged in below 4.3.1's lowest version (merge.py). Writes:
  schemas/<dir>/<Name>.json      one file per message, Kafka's JSON format, keys in upstream order
  schemas/SOURCE.json            where the facts came from: each artifact, its sha256 and files; the merged versions
  schemas/manifest.json          the API keys and versions the broker may advertise (the broker intersects this with
                                 the APIs it implements); derived from the specs plus the policy below
  schemas/kafka-advertised.json  what Apache Kafka 4.3.1 itself advertises (the API census compares against it)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from wirebroker.protocol.codegen.jars import (
    DEFAULT_CACHE,
    PINS,
    Artifact,
    Pins,
    fetch,
    load_pins,
    read_specs,
)
from wirebroker.protocol.codegen.merge import check_merged, merge, older_range
from wirebroker.protocol.codegen.schema import Versions, strip_comments

DROPPED_KEYS = frozenset({"about"})

# Versions below Kafka 4's floor that the broker still advertises: librdkafka before 2.11.1 turns off features when
# these minimums are missing (KAFKA-18659); a version the broker cannot serve is refused per request. (Kafka 4.3.1
# itself keeps only Produce at 0.)
KEPT_OLD_FLOORS = frozenset({"Produce", "Fetch", "ListOffsets", "OffsetCommit", "OffsetFetch"})

# The highest version each handler honours where Kafka 4.3.1 serves more: raise one only with the handler (and a
# test of the new version's fields), then `make schemas` (issue 17). None today: TxnOffsetCommit v5, transaction
# protocol 2's (KIP-890 part 2), adds the offsets partition to the transaction (apis/txn_offset_commit.py).
HONOURED_MAX_VERSIONS: dict[str, int] = {}

# Kafka's ApiVersions: Produce advertised from v0 for old librdkafka (KAFKA-18659), the telemetry APIs only with a
# client metrics plugin (none by default).
KAFKA_ADVERTISED_MIN = {"Produce": 0}
KAFKA_UNADVERTISED = frozenset({"GetTelemetrySubscriptions", "PushTelemetry"})


def strip(node: object) -> object:
    if isinstance(node, dict):
        return {k: strip(v) for k, v in node.items() if k not in DROPPED_KEYS}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node


def kafka_range(spec: dict) -> tuple[str, int, int] | None:
    """(name, min, max) a broker of the spec's release serves: its lowest version to its highest stable one."""
    if "broker" not in spec.get("listeners", ()):
        return None
    valid = Versions.parse(spec["validVersions"])
    high = valid.high - 1 if spec.get("latestVersionUnstable") else valid.high
    if high < valid.low:
        return None
    return spec["name"][: -len("Request")], valid.low, high


def kafka_advertised_entry(spec: dict) -> dict | None:
    """What Apache Kafka advertises for one request spec of its own release."""
    served = kafka_range(spec)
    if served is None or served[0] in KAFKA_UNADVERTISED:
        return None
    name, low, high = served
    return _entry(spec, name, KAFKA_ADVERTISED_MIN.get(name, low), high)


def manifest_entry(newer: dict, merged: dict) -> dict | None:
    """What this broker may advertise for one request: Kafka's range, old floors kept, capped where not honoured."""
    served = kafka_range(newer)
    if served is None:
        return None
    name, low, high = served
    if name in KEPT_OLD_FLOORS:
        low = Versions.parse(merged["validVersions"]).low
    return _entry(newer, name, low, min(high, HONOURED_MAX_VERSIONS.get(name, high)))


def _entry(spec: dict, name: str, low: int, high: int) -> dict:
    return {"api_key": spec["apiKey"], "name": name, "min_version": low, "max_version": high}


def read_artifacts(pins: Pins, cache: Path) -> dict[Artifact, dict[str, str]]:
    """Each pinned artifact (the older one included) -> its specs' texts by schemas/ path."""
    return {a: read_specs(fetch(a, cache), a) for a in (*pins.artifacts, pins.older_versions)}


def sync(pins: Pins, texts: dict[Artifact, dict[str, str]], out: Path) -> int:
    older = {path: _parse(text) for path, text in texts[pins.older_versions].items()}
    manifest, advertised, merged_versions, sources = [], [], {}, []
    count = 0
    for artifact in pins.artifacts:
        for stale in (out / artifact.dir).glob("*.json"):  # a spec the release renamed or removed
            stale.unlink()
        for path, text in texts[artifact].items():
            newer = _parse(text)
            spec = newer
            if path in older:
                request = older.get(path.replace("Response.json", "Request.json"), older[path])
                unstable = bool(request.get("latestVersionUnstable"))
                spec = merge(older[path], newer, older_unstable=unstable)
                check_merged(spec, older[path], newer)
                if (taken := older_range(older[path], newer, older_unstable=unstable)) is not None:
                    merged_versions[path] = taken
            target = out / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(strip(spec), indent=2) + "\n")
            count += 1
            if newer["type"] == "request":
                manifest.append(manifest_entry(newer, spec))
                advertised.append(kafka_advertised_entry(newer))
        sources.append({"coordinates": artifact.coordinates, "sha256": artifact.sha256,
                        "entries": artifact.entries, "files": sorted(texts[artifact])})
    _write_json(out / "manifest.json", _by_key(manifest))
    _write_json(out / "kafka-advertised.json", _by_key(advertised))
    source = {
        "project": "apache/kafka",
        "version": pins.kafka_version,
        "license": "Apache-2.0 (LICENSE and NOTICE stay with the upstream jars)",
        "artifacts": sources,
        "older_versions": {"coordinates": pins.older_versions.coordinates, "sha256": pins.older_versions.sha256,
                           "versions_by_file": dict(sorted(merged_versions.items()))},
    }
    _write_json(out / "SOURCE.json", source)
    return count


def _parse(text: str) -> dict:
    return json.loads(strip_comments(text))


def _by_key(entries: list[dict | None]) -> list[dict]:
    return sorted((e for e in entries if e is not None), key=lambda e: e["api_key"])


def _write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wirebroker.protocol.codegen.sync", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pins", type=Path, default=PINS, help="the pinned artifacts (schemas/jars.json)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where the jars are kept")
    parser.add_argument("--out", type=Path, default=PINS.parent)
    args = parser.parse_args(argv)
    pins = load_pins(args.pins)
    count = sync(pins, read_artifacts(pins, args.cache), args.out)
    print(f"synced {count} schemas of Kafka {pins.kafka_version} into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
