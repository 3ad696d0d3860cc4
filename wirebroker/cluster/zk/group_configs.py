"""Group configs in ZooKeeper (KIP-932's share-group keys, set with IncrementalAlterConfigs on GROUP resources), so
that every broker of a ZooKeeper cluster sees what one of them was told: a share-partition leader reads its group's
`share.auto.offset.reset` and lock duration wherever the admin's request landed. Kafka keeps them in its metadata
log (ConfigRecords of type GROUP, KRaft only); here they are an entity config node as Kafka's ZooKeeper mode keeps
the others (config_nodes.py):

    /config/groups/<group id, URL-encoded>   {"version":1,"config":{"share.auto.offset.reset":"earliest"}}

Each broker watches the node of a group from its first look at it (a kazoo DataWatch), so a change reaches every
broker within ZooKeeper's notification delay, and a read never waits for ZooKeeper.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from urllib.parse import quote

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from wirebroker.cluster.zk.config_nodes import update_config_node

CONFIG_GROUPS = "/config/groups"


class ZkGroupConfigStore:
    def __init__(self, zk: KazooClient) -> None:
        self._zk = zk
        self._lock = threading.Lock()
        self._configs: dict[str, dict[str, str]] = {}
        self._watched: set[str] = set()

    def of(self, group_id: str) -> dict[str, str]:
        """The group's keys (a copy); the first look at a group starts watching its node."""
        with self._lock:
            watched = group_id in self._watched
            self._watched.add(group_id)
        if not watched:
            try:
                self._changed(group_id, self._zk.get(self._path(group_id))[0])
            except NoNodeError:
                pass
            self._zk.DataWatch(self._path(group_id), lambda data, stat: self._changed(group_id, data))
        with self._lock:
            return dict(self._configs.get(group_id, {}))

    def update(self, group_id: str, changes: Mapping[str, str | None]) -> None:
        """Set each key (None: remove it) in ZooKeeper; this broker sees it at once, the others by their watch."""
        update_config_node(self._zk, self._path(group_id), changes)
        with self._lock:
            configs = self._configs.setdefault(group_id, {})
            for key, value in changes.items():
                if value is None:
                    configs.pop(key, None)
                else:
                    configs[key] = value

    def _changed(self, group_id: str, data: bytes | None) -> None:
        configs = json.loads(data).get("config", {}) if data else {}
        with self._lock:
            self._configs[group_id] = dict(configs)

    @staticmethod
    def _path(group_id: str) -> str:
        return f"{CONFIG_GROUPS}/{quote(group_id, safe='')}"  # a group id may hold a "/"
