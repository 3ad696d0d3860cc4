"""`python -m wirebroker.protocol.codegen.sync UPSTREAM_DIR VERSION`: refresh schemas/ from Kafka's JSON specs.

Keeps the schema facts (names, types, versions, tags, defaults) and drops upstream comments and `about` prose, so
no upstream text enters the project. Writes:
  schemas/<dir>/<Name>.json   one file per message, Kafka's JSON format, keys in upstream order
  schemas/SOURCE.json         where the facts came from (project, version, files)
  schemas/manifest.json       the API keys and versions the broker may advertise (the broker intersects this with
                              the APIs it implements); derived here from the specs plus the policy below
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from wirebroker.protocol.codegen.schema import Versions, strip_comments

DROPPED_KEYS = frozenset({"about"})

# Lowest versions Apache Kafka 4.x still serves (KIP-896 removed older ones), where it raised the floor.
# Produce, Fetch, ListOffsets, OffsetCommit and OffsetFetch keep 0: librdkafka before 2.11.1 turns off features
# when those minimums are missing (KAFKA-18659); a version the broker cannot serve is refused per request.
KAFKA4_MIN_VERSIONS = {
    "CreateTopics": 2,
    "DeleteTopics": 1,
    "OffsetForLeaderEpoch": 2,
    "WriteTxnMarkers": 1,
    "DescribeAcls": 1,
    "CreateAcls": 1,
    "DeleteAcls": 1,
    "DescribeConfigs": 1,
}


# Versions this snapshot marks `latestVersionUnstable` that Apache Kafka 4.3.1 (the release whose API set the broker
# matches) serves as stable; clients use them (confluent-kafka 2.16 speaks only ConsumerGroupHeartbeat v1).
STABLE_IN_KAFKA_4_3 = {"ConsumerGroupHeartbeat": 1}


def strip(node: object) -> object:
    if isinstance(node, dict):
        return {k: strip(v) for k, v in node.items() if k not in DROPPED_KEYS}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node


def manifest_entry(spec: dict) -> dict | None:
    """What a broker may advertise for one request spec, or None for APIs a broker does not serve."""
    if "broker" not in spec.get("listeners", ()):
        return None
    valid = Versions.parse(spec["validVersions"])
    name = spec["name"][: -len("Request")]
    unstable = spec.get("latestVersionUnstable") and STABLE_IN_KAFKA_4_3.get(name) != valid.high
    high = valid.high - 1 if unstable else valid.high
    low = max(valid.low, KAFKA4_MIN_VERSIONS.get(name, 0))
    if high < low:
        return None
    return {"api_key": spec["apiKey"], "name": name, "min_version": low, "max_version": high}


def sync(upstream: Path, version: str, out: Path) -> int:
    files = sorted(upstream.glob("*/*.json"))
    manifest = []
    for path in files:
        spec = json.loads(strip_comments(path.read_text()))
        target = out / path.relative_to(upstream)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(strip(spec), indent=2) + "\n")
        if spec["type"] == "request":
            entry = manifest_entry(spec)
            if entry:
                manifest.append(entry)
    manifest.sort(key=lambda e: e["api_key"])
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    source = {
        "project": "apache/kafka",
        "version": version,
        "license": "Apache-2.0 (LICENSE and NOTICE stay with the upstream copy)",
        "files": [str(p.relative_to(upstream)) for p in files],
    }
    (out / "SOURCE.json").write_text(json.dumps(source, indent=1) + "\n")
    return len(files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wirebroker.protocol.codegen.sync", description=__doc__)
    parser.add_argument("upstream", type=Path, help="directory of Kafka's JSON message specs")
    parser.add_argument("version", help="the upstream version, e.g. 4.0.0-SNAPSHOT")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[3] / "schemas")
    args = parser.parse_args(argv)
    count = sync(args.upstream, args.version, args.out)
    print(f"synced {count} schemas into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
