"""Which API versions this broker advertises and serves: its own, or those of an emulated Apache Kafka release.

`wirebroker --emulate 4.0` (the key `wirebroker.emulate.kafka.version`, `Broker(emulate="4.0")`) lets users test
against what their production cluster speaks. apis/releases/kafka-<line>.json holds what each release's real broker
answered to ApiVersions on its broker listener (gathered by `python -m compat_tests.kafka_releases`). Emulating one:
- ApiVersions lists the release's API keys, each narrowed to what this broker serves: where wirebroker serves less
  than the release it advertises the intersection, and an API the release has and wirebroker does not serve is left
  out. A client that infers the broker's release from the list
  (kafka-python) still infers the emulated one, as long as the versions it looks for are served.
- A request for an API or a version outside that list gets UNSUPPORTED_VERSION from the dispatcher, as any version
  not served does. The inter-broker APIs that are never advertised are served as without emulation.
- ApiVersions v3+ reports the release's supported features and its finalized feature levels (a fresh cluster's),
  except a level whose protocol this broker does not serve in the emulated table: clients switch protocol on them
  (a Java 4.x producer uses transaction protocol 2, EndTxn v5 and no AddPartitionsToTxn, when transaction.version
  is 2; KIP-890).
Without emulation: the registry's versions (apis/registry.py) and OWN_FEATURE_LEVELS below (each only while the
versions its protocol needs are advertised).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from wirebroker.apis.registry import SERVED

RELEASES_DIR = Path(__file__).resolve().parent / "releases"
# Kafka reports the metadata offset at which the features were finalized; an emulated cluster's is fixed.
EMULATED_FEATURES_EPOCH = 1
NO_FEATURES_EPOCH = -1  # Kafka's value when no feature is finalized
PRODUCE_KEY, END_TXN_KEY, TXN_OFFSET_COMMIT_KEY = 0, 26, 28
# A finalized feature level -> the (API key, version)s a client then needs, for levels that change its protocol.
LEVEL_NEEDS: dict[tuple[str, int], tuple[tuple[int, int], ...]] = {
    # KIP-890 part 2: the producer ends transactions with EndTxn v5 and adds no partition itself: its records'
    # partitions join with Produce v12, the offsets partition with TxnOffsetCommit v5
    ("transaction.version", 2): ((PRODUCE_KEY, 12), (END_TXN_KEY, 5), (TXN_OFFSET_COMMIT_KEY, 5)),
}


# The features this broker reports without emulation: those of Kafka 4.3.1's list whose level it honours, each
# supported from 0 to that level and finalized at it (Kafka 4.3.1 lists both so). share.version 1: share groups
# (KIP-932, apis/share_*.py); group.version 1: the consumer group protocol (KIP-848, ConsumerGroupHeartbeat);
# transaction.version 2: transaction protocol 2 (KIP-890 part 2: EndTxn v5 bumps the epoch at every end, partition
# leaders add the partitions of Produce v12+ and TxnOffsetCommit v5 to the transaction), which Kafka 4.3.1 finalizes
# on a fresh cluster; a Java 4.x producer then sends no AddPartitionsToTxn or AddOffsetsToTxn. Left out:
# metadata.version and kraft.version (KRaft's levels: this broker's cluster is coordinated by ZooKeeper),
# eligible.leader.replicas.version (KIP-966 is not served) and streams.version (KIP-1071 is not served).
OWN_FEATURE_LEVELS = {"group.version": 1, "share.version": 1, "transaction.version": 2}


@dataclass(frozen=True, slots=True)
class Feature:
    name: str
    min_version: int  # a finalized feature's min_version_level
    max_version: int  # a finalized feature's max_version_level


@dataclass(frozen=True, slots=True)
class ApiTable:
    """What the dispatcher accepts and what ApiVersions says, for one broker."""

    served: Mapping[int, tuple[int, int]]  # API key -> (min, max): requests outside are refused
    advertised: Mapping[int, tuple[int, int]]  # in key order: the ApiVersions list
    supported_features: tuple[Feature, ...] = ()
    finalized_features: tuple[Feature, ...] = ()
    release: str | None = None  # the emulated Kafka release, e.g. "3.6.2"

    @property
    def finalized_features_epoch(self) -> int:
        return EMULATED_FEATURES_EPOCH if self.finalized_features else NO_FEATURES_EPOCH


def api_table(emulate: str | None = None) -> ApiTable:
    """The table of this broker (emulate None) or of the emulated release line ("3.6").

    Built once per registry state: the registry only grows (a cluster member registers the inter-broker APIs when
    it starts, maybe after a single broker of the same process built its table), so its size tells the states apart.
    """
    return _api_table(emulate, len(SERVED))


@functools.cache
def _api_table(emulate: str | None, _registered: int) -> ApiTable:
    own = {key: (api.min_version, api.max_version) for key, api in sorted(SERVED.items())}
    advertised = {key: own[key] for key, api in sorted(SERVED.items()) if api.advertised}
    if emulate is None:
        levels = {name: level for name, level in OWN_FEATURE_LEVELS.items() if _level_served(name, level, advertised)}
        return ApiTable(own, advertised, tuple(Feature(name, 0, level) for name, level in levels.items()),
                        tuple(Feature(name, level, level) for name, level in levels.items()))
    release = read_release(emulate)
    emulated = {}
    for key, (low, high) in release_versions(release).items():
        if key in advertised and max(low, advertised[key][0]) <= min(high, advertised[key][1]):
            emulated[key] = (max(low, advertised[key][0]), min(high, advertised[key][1]))
    served = {key: versions for key, versions in own.items() if key not in advertised} | emulated
    supported = tuple(Feature(f["name"], f["min_version"], f["max_version"]) for f in release["supported_features"])
    finalized = tuple(_servable(Feature(f["name"], f["min_version_level"], f["max_version_level"]), emulated)
                      for f in release["finalized_features"])
    return ApiTable(served, emulated, supported, tuple(f for f in finalized if f is not None),
                    release["kafka_version"])


def read_release(line: str) -> dict:
    """The stored answer of the Kafka release line `line` ("4.0"): apis/releases/kafka-4.0.json."""
    return json.loads((RELEASES_DIR / f"kafka-{line}.json").read_text())


def release_versions(release: dict) -> dict[int, tuple[int, int]]:
    return {entry["api_key"]: (entry["min_version"], entry["max_version"]) for entry in release["api_keys"]}


def _servable(feature: Feature, advertised: Mapping[int, tuple[int, int]]) -> Feature | None:
    """The feature at the highest finalized level whose protocol is advertised; None if not even its lowest is."""
    level = feature.max_version
    while level >= feature.min_version and not _level_served(feature.name, level, advertised):
        level -= 1
    return Feature(feature.name, feature.min_version, level) if level >= feature.min_version else None


def _level_served(name: str, level: int, advertised: Mapping[int, tuple[int, int]]) -> bool:
    return all(key in advertised and advertised[key][1] >= version for key, version in LEVEL_NEEDS.get((name, level), ()))
