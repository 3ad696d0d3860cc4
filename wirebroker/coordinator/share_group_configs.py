"""The group configs of share groups (KIP-932's GroupConfig keys, Kafka 4.3.1), set and read with
IncrementalAlterConfigs and DescribeConfigs on GROUP resources.

Kafka keeps them in its metadata log (ConfigRecords of type GROUP); a single broker keeps them in
`<first log dir>/share-group-configs.json`, rewritten atomically on every change:

    {"version": 1, "groups": {"orders": {"share.auto.offset.reset": "earliest"}}}

A ZooKeeper cluster keeps them in ZooKeeper instead (cluster/zk/group_configs.py), so every broker reads what one
was told: ClusterShareGroupConfigs. A key left unset falls back to the broker's `group.share.*` setting (or, for
`share.auto.offset.reset`, to latest).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from wirebroker.log.checkpoints import write_file_atomically
from wirebroker.protocol.errors import InvalidConfigError

CONFIGS_FILE = "share-group-configs.json"
VERSION = 1


def _offset_reset(value: str) -> None:
    if value not in ("latest", "earliest") and not value.startswith("by_duration:"):
        raise InvalidConfigError(f"Invalid value {value} for configuration share.auto.offset.reset: must be "
                                 "latest, earliest or by_duration:<ISO-8601 duration>")


def _int_in(low: int, high: int):
    def check(value: str) -> None:
        try:
            number = int(value)
        except ValueError:
            raise InvalidConfigError(f"Invalid value {value}: not an integer") from None
        if not low <= number <= high:
            raise InvalidConfigError(f"Invalid value {value}: must be between {low} and {high}")
    return check


def _isolation(value: str) -> None:
    if value not in ("read_committed", "read_uncommitted"):
        raise InvalidConfigError(f"Invalid value {value} for configuration share.isolation.level")


# The share keys of Kafka's GroupConfig, with their validators (Kafka's bounds for the timeouts).
SHARE_GROUP_KEYS = {
    "share.auto.offset.reset": _offset_reset,
    "share.record.lock.duration.ms": _int_in(1000, 3_600_000),
    "share.session.timeout.ms": _int_in(1, 2**31 - 1),
    "share.heartbeat.interval.ms": _int_in(1, 2**31 - 1),
    "share.isolation.level": _isolation,
    "share.delivery.count.limit": _int_in(2, 10),
}


class ShareGroupConfigs:
    def __init__(self, path: Path, groups: dict[str, dict[str, str]]) -> None:
        self.path = path
        self._groups = groups
        self._lock = threading.Lock()

    @classmethod
    def open(cls, log_dir: Path) -> ShareGroupConfigs:
        path = Path(log_dir) / CONFIGS_FILE
        groups = json.loads(path.read_text())["groups"] if path.exists() else {}
        return cls(path, groups)

    def get(self, group_id: str, key: str) -> str | None:
        with self._lock:
            return self._groups.get(group_id, {}).get(key)

    def of(self, group_id: str) -> dict[str, str]:
        with self._lock:
            return dict(self._groups.get(group_id, {}))

    @staticmethod
    def validate(changes: Mapping[str, str | None]) -> None:
        for key, value in changes.items():
            check = SHARE_GROUP_KEYS.get(key)
            if check is None:
                raise InvalidConfigError(f"Unknown group config name: {key}")
            if value is not None:
                check(value)

    def alter(self, group_id: str, changes: Mapping[str, str | None]) -> None:
        """Set keys (a None value deletes one), after validating all of them."""
        self.validate(changes)
        with self._lock:
            configs = self._groups.setdefault(group_id, {})
            for key, value in changes.items():
                if value is None:
                    configs.pop(key, None)
                else:
                    configs[key] = value
            if not configs:
                del self._groups[group_id]
            write_file_atomically(str(self.path), json.dumps({"version": VERSION, "groups": self._groups},
                                                             sort_keys=True))


class GroupConfigStore(Protocol):
    """Group configs kept for a whole cluster (cluster/zk/group_configs.py)."""

    def of(self, group_id: str) -> dict[str, str]: ...

    def update(self, group_id: str, changes: Mapping[str, str | None]) -> None: ...


class ClusterShareGroupConfigs:
    """The share groups' configs of a cluster, validated here and kept in the cluster's store."""

    validate = staticmethod(ShareGroupConfigs.validate)

    def __init__(self, store: GroupConfigStore) -> None:
        self._store = store

    def get(self, group_id: str, key: str) -> str | None:
        return self._store.of(group_id).get(key)

    def of(self, group_id: str) -> dict[str, str]:
        return self._store.of(group_id)

    def alter(self, group_id: str, changes: Mapping[str, str | None]) -> None:
        self.validate(changes)
        self._store.update(group_id, changes)
