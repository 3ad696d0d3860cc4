"""Kafka's entity config nodes in ZooKeeper (/config/<entity type>/<name>: {"version":1,"config":{key: text}}),
changed key by key so that what others keep in the same node (a user's SCRAM credentials and quotas) stays."""

from __future__ import annotations

import json
from collections.abc import Mapping

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError


def update_config_node(zk: KazooClient, path: str, changes: Mapping[str, str | None]) -> None:
    """Set each key to its text, or remove it (None); read-modify-write, again if another broker wrote meanwhile."""
    while True:
        try:
            data, stat = zk.get(path)
            node = json.loads(data) if data else {"version": 1, "config": {}}
        except NoNodeError:
            node, stat = {"version": 1, "config": {}}, None
        config = node.setdefault("config", {})
        for key, text in changes.items():
            if text is None:
                config.pop(key, None)
            else:
                config[key] = text
        encoded = json.dumps(node).encode()
        try:
            if stat is None:
                zk.create(path, encoded, makepath=True)
            else:
                zk.set(path, encoded, version=stat.version)
            return
        except (NodeExistsError, NoNodeError, BadVersionError):
            continue
