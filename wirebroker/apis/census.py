"""The API census: every API key Apache Kafka advertises, the versions this broker advertises beside it, and the
issue or reason for each difference. `python -m wirebroker.apis.census` writes docs/api-census.md; `--check` only
compares (tests/unit/apis/test_census.py runs it, so the table follows every change of the registry or schemas).

Kafka's side is what its broker advertises by default for the release the schemas come from (KAFKA_ADVERTISED_VERSIONS,
generated from schemas/kafka-advertised.json); this broker's is the registry's (apis/registry.py), as ApiVersions
answers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import wirebroker.apis  # noqa: F401  (imports every API module: the registry is complete)
from wirebroker.apis.registry import supported_versions
from wirebroker.protocol.messages import (
    API_SPECS,
    KAFKA_ADVERTISED_VERSIONS,
    KAFKA_VERSION,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "api-census.md"

_SHARE_GROUPS = "issue 17 item 3: share groups (KIP-932)"
_SECURITY = "issue 14: security (SASL, delegation tokens, SCRAM credentials, quotas)"
_KRAFT = "KRaft controller API: this broker's cluster is coordinated by ZooKeeper (issue 11), not by a KRaft quorum"
_TRANSACTIONS = "issue 12: transactions; the newest version is not honoured yet"
_NEWER = "issue 17 item 2: the newest version is not honoured yet"
_OLD_FLOOR = "older versions still advertised for librdkafka before 2.11.1 (KAFKA-18659), refused or served per request"

# Why this broker's range differs from Kafka's, by API name. A key that differs and has no reason here fails the
# census; a reason for a key that no longer differs is not shown.
GAP_REASONS = {
    "Produce": _NEWER + " (v12, v13 with topic ids); v0-2 advertised for librdkafka (KAFKA-18659), refused per request",
    "Fetch": _NEWER + f" (v18); {_OLD_FLOOR}",
    "ListOffsets": _NEWER + f" (v11); {_OLD_FLOOR}",
    "Metadata": _NEWER + " (v13)",
    "OffsetCommit": _NEWER + f" (v10, topic ids); {_OLD_FLOOR}",
    "OffsetFetch": _NEWER + f" (v10, topic ids); {_OLD_FLOOR}",
    "DescribeGroups": _NEWER,
    "DescribeLogDirs": _NEWER,
    "AlterPartitionReassignments": _NEWER,
    "DescribeCluster": _NEWER,
    "ConsumerGroupDescribe": _NEWER,
    "ListConfigResources": "issue 17 item 2: not served yet",
    "InitProducerId": _TRANSACTIONS,
    "AddPartitionsToTxn": _TRANSACTIONS,
    "AddOffsetsToTxn": _TRANSACTIONS,
    "EndTxn": _TRANSACTIONS,
    "WriteTxnMarkers": _TRANSACTIONS,
    "TxnOffsetCommit": _TRANSACTIONS,
    "DescribeTransactions": _TRANSACTIONS,
    "ListTransactions": _TRANSACTIONS,
    "DescribeProducers": _TRANSACTIONS,
    "SaslHandshake": _SECURITY,
    "SaslAuthenticate": _SECURITY,
    "CreateDelegationToken": _SECURITY,
    "RenewDelegationToken": _SECURITY,
    "ExpireDelegationToken": _SECURITY,
    "DescribeDelegationToken": _SECURITY,
    "DescribeClientQuotas": _SECURITY,
    "AlterClientQuotas": _SECURITY,
    "DescribeUserScramCredentials": _SECURITY,
    "AlterUserScramCredentials": _SECURITY,
    "UpdateFeatures": "no issue: this broker finalizes no feature levels, so there are none to update",
    "UnregisterBroker": _KRAFT,
    "AddRaftVoter": _KRAFT,
    "RemoveRaftVoter": _KRAFT,
    "ShareGroupHeartbeat": _SHARE_GROUPS,
    "ShareGroupDescribe": _SHARE_GROUPS,
    "ShareFetch": _SHARE_GROUPS,
    "ShareAcknowledge": _SHARE_GROUPS,
    "InitializeShareGroupState": _SHARE_GROUPS,
    "ReadShareGroupState": _SHARE_GROUPS,
    "WriteShareGroupState": _SHARE_GROUPS,
    "DeleteShareGroupState": _SHARE_GROUPS,
    "ReadShareGroupStateSummary": _SHARE_GROUPS,
    "DescribeShareGroupOffsets": _SHARE_GROUPS,
    "AlterShareGroupOffsets": _SHARE_GROUPS,
    "DeleteShareGroupOffsets": _SHARE_GROUPS,
    "StreamsGroupHeartbeat": "no issue yet: streams groups (KIP-1071) are not planned",
    "StreamsGroupDescribe": "no issue yet: streams groups (KIP-1071) are not planned",
}


class MissingReasonError(ValueError):
    """An API whose range differs from Kafka's has no reason in GAP_REASONS."""


def render(ours: dict[int, tuple[int, int]], kafka: dict[int, tuple[int, int]]) -> str:
    """The census as Markdown: one row per key either side advertises, in key order."""
    rows = []
    same = 0
    for key in sorted(set(ours) | set(kafka)):
        name = API_SPECS[key].name
        reason = ""
        if ours.get(key) == kafka.get(key):
            same += 1
        else:
            try:
                reason = GAP_REASONS[name]
            except KeyError:
                raise MissingReasonError(f"{name} (key {key}): ours {ours.get(key)}, Kafka's {kafka.get(key)}; "
                                         "add the issue or reason to GAP_REASONS") from None
        rows.append(f"| {key} | {name} | {_range(kafka.get(key))} | {_range(ours.get(key))} | {reason} |")
    head = [
        f"# API census: Apache Kafka {KAFKA_VERSION} and wirebroker",
        "",
        "Generated by `python -m wirebroker.apis.census` (DO NOT EDIT; a unit test keeps it current). Kafka's column is",
        f"what Apache Kafka {KAFKA_VERSION}'s broker advertises in ApiVersions by default ({len(kafka)} keys); ours is",
        f"what wirebroker advertises ({len(ours)} keys). {same} keys match exactly.",
        "",
        f"| key | API | Kafka {KAFKA_VERSION} | wirebroker | issue or reason for the difference |",
        "|---:|---|---|---|---|",
    ]
    return "\n".join(head + rows) + "\n"


def _range(versions: tuple[int, int] | None) -> str:
    return "–" if versions is None else f"{versions[0]}–{versions[1]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wirebroker.apis.census", description=__doc__)
    parser.add_argument("--out", type=Path, default=DOC)
    parser.add_argument("--check", action="store_true", help="fail if the committed census is stale")
    args = parser.parse_args(argv)
    text = render(supported_versions(), KAFKA_ADVERTISED_VERSIONS)
    current = args.out.read_text() if args.out.exists() else None
    if args.check:
        if current != text:
            print(f"stale: {args.out} (run python -m wirebroker.apis.census)", file=sys.stderr)
            return 1
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
