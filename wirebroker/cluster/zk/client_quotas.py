"""Client quotas in ZooKeeper, where Kafka's ZooKeeper mode keeps them (AdminZkClient.changeClientIdConfig,
changeUserOrUserClientIdConfig, changeIpConfig):

    /config/users/<user>                       {"version":1,"config":{"producer_byte_rate":"1048576"}}
    /config/users/<user>/clients/<client-id>   (the user and client-id entity)
    /config/clients/<client-id>
    /config/ips/<ip>                           {"version":1,"config":{"connection_creation_rate":"10"}}
    /config/changes/config_change_<seq>        {"version":2,"entity_path":"users/<user>/clients/<client-id>"}

Names are sanitized as Kafka's Sanitizer does (URL-encoded), "<default>" is the type's default entity. A user's
node may also hold SCRAM credentials (cluster/zk/scram_credentials.py): writes keep every key they do not set.
Every broker keeps a snapshot, read again whenever a change notification appears, so a throttling decision reads
no ZooKeeper node; the same interface as the single node's cluster/client_quota_store.py.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from urllib.parse import quote, unquote

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.recipe.watchers import ChildrenWatch

from wirebroker.cluster.client_quota_store import Alterations
from wirebroker.cluster.client_quotas import (
    CLIENT_ID,
    CLIENT_KEYS,
    IP,
    IP_KEYS,
    USER,
    Entity,
    Quotas,
    entity_of,
)
from wirebroker.cluster.zk import paths
from wirebroker.cluster.zk.change_notifications import notify
from wirebroker.cluster.zk.config_nodes import update_config_node

log = logging.getLogger(__name__)

DEFAULT = "<default>"  # Kafka's ZooKeeper name of a type's default entity
_ROOTS = {USER: "users", CLIENT_ID: "clients", IP: "ips"}
_QUOTA_KEYS = CLIENT_KEYS.keys() | IP_KEYS.keys()


def sanitize(name: str | None) -> str:
    """Kafka's Sanitizer.sanitize (URL encoding, '*' and '~' escaped too), or <default> for None."""
    return DEFAULT if name is None else quote(name, safe="").replace("~", "%7E")


def _desanitize(node: str) -> str | None:
    return None if node == DEFAULT else unquote(node)


def entity_path(entity: Entity) -> str:
    """The entity's path under /config, as in a change notification: users/alice/clients/app."""
    names = dict(entity)
    if USER in names and CLIENT_ID in names:
        return f"users/{sanitize(names[USER])}/clients/{sanitize(names[CLIENT_ID])}"
    ((entity_type, name),) = entity
    return f"{_ROOTS[entity_type]}/{sanitize(name)}"


class ZkClientQuotaStore:
    def __init__(self, zk: KazooClient) -> None:
        self.zk = zk
        self._lock = threading.Lock()
        self._quotas: Quotas = {}
        self.listeners: list[Callable[[Quotas], None]] = []
        zk.ensure_path(paths.CONFIG_CHANGES)
        ChildrenWatch(zk, paths.CONFIG_CHANGES, self._changes_appeared)

    def quotas(self) -> Quotas:
        return self._quotas

    def alter(self, alterations: Alterations) -> None:
        for entity, ops in alterations.items():
            path = entity_path(entity)
            update_config_node(self.zk, f"/config/{path}",
                               {key: None if value is None else _kafka_value(key, value) for key, value in ops.items()})
            notify(self.zk, paths.CONFIG_CHANGES, paths.CONFIG_CHANGE_PREFIX,
                   json.dumps({"version": 2, "entity_path": path}).encode())
        self._reload()  # visible here at once, not only when the watch fires

    def _changes_appeared(self, _children: list[str]) -> bool:
        try:
            self._reload()
        except Exception:
            log.exception("Could not read the client quotas from ZooKeeper; keeping the previous ones")
        return True  # keep watching

    def _reload(self) -> None:
        quotas: dict[Entity, dict[str, float]] = {}
        for entity_type, root in _ROOTS.items():
            for node in self._children(f"/config/{root}"):
                self._read(quotas, f"/config/{root}/{node}", [(entity_type, _desanitize(node))])
                if entity_type == USER:
                    for client in self._children(f"/config/{root}/{node}/clients"):
                        self._read(quotas, f"/config/{root}/{node}/clients/{client}",
                                   [(USER, _desanitize(node)), (CLIENT_ID, _desanitize(client))])
        with self._lock:
            changed = quotas != self._quotas
            self._quotas = quotas
        if changed:
            for listener in self.listeners:
                listener(quotas)

    def _children(self, path: str) -> list[str]:
        try:
            return self.zk.get_children(path)
        except NoNodeError:
            return []

    def _read(self, quotas: dict, path: str, entity: list) -> None:
        try:
            data, _ = self.zk.get(path)
            config = json.loads(data).get("config", {}) if data else {}
            values = {key: float(value) for key, value in config.items() if key in _QUOTA_KEYS}
        except NoNodeError:
            return
        except ValueError as exc:
            log.warning("Ignoring the unreadable client quotas in %s: %s", path, exc)
            return
        if values:
            quotas[entity_of(entity)] = values


def _kafka_value(key: str, value: float) -> str:
    """As Kafka writes a quota in ZooKeeper: LONG and INT keys as whole numbers, DOUBLE keys as doubles."""
    kind = CLIENT_KEYS.get(key) or IP_KEYS.get(key)
    return str(int(value)) if kind in ("LONG", "INT") else str(float(value))
