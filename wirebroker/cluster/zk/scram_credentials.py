"""SCRAM credentials in ZooKeeper, where Kafka's ZooKeeper mode keeps them (AdminZkClient.changeUserOrUserClientIdConfig):

    /config/users/<user>                     {"version":1,"config":{"SCRAM-SHA-512":"salt=...,stored_key=...,
                                                                    server_key=...,iterations=4096"}}
    /config/changes/config_change_<seq>      {"version":2,"entity_path":"users/<user>"}

so a cluster of wirebrokers, and Kafka's own tools reading ZooKeeper, see the same users. Every broker keeps a
snapshot that kazoo's watches refresh (the users' list and each user's node), so authenticating a client reads no
ZooKeeper node on the network thread; the same interface as the single node's cluster/scram_credentials.py.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable
from functools import partial

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.recipe.watchers import ChildrenWatch, DataWatch

from wirebroker.cluster.zk import paths
from wirebroker.cluster.zk.change_notifications import notify
from wirebroker.cluster.zk.config_nodes import update_config_node
from wirebroker.security.scram_credential import MECHANISMS, ScramCredential

log = logging.getLogger(__name__)

CONFIG_USERS = "/config/users"
USERS_ENTITY = "users"


class ZkScramCredentialStore:
    def __init__(self, zk: KazooClient) -> None:
        self.zk = zk
        self._lock = threading.Lock()
        self._users: dict[str, dict[str, ScramCredential]] = {}
        self._watched: set[str] = set()
        zk.ensure_path(CONFIG_USERS)
        ChildrenWatch(zk, CONFIG_USERS, self._users_changed)

    def credential(self, mechanism: str, user: str) -> ScramCredential | None:
        return self._users.get(user, {}).get(mechanism)

    def users(self) -> dict[str, dict[str, ScramCredential]]:
        return self._users

    def alter(self, upsertions: Iterable[tuple[str, str, ScramCredential]],
              deletions: Iterable[tuple[str, str]]) -> None:
        changes: dict[str, dict[str, ScramCredential | None]] = {}
        for user, mechanism in deletions:
            changes.setdefault(user, {})[mechanism] = None
        for user, mechanism, credential in upsertions:
            changes.setdefault(user, {})[mechanism] = credential
        for user, mechanisms in changes.items():
            self._write_user(user, mechanisms)
            notify(self.zk, paths.CONFIG_CHANGES, paths.CONFIG_CHANGE_PREFIX,
                   json.dumps({"version": 2, "entity_path": f"{USERS_ENTITY}/{user}"}).encode())
            self._user_changed(user, self._read_user(user))  # visible here at once, not only when the watch fires

    def _write_user(self, user: str, mechanisms: dict[str, ScramCredential | None]) -> None:
        """Change the user's node, keeping its other configs (quotas live there too in Kafka)."""
        update_config_node(self.zk, f"{CONFIG_USERS}/{user}", {
            mechanism: None if credential is None else credential.to_kafka_string()
            for mechanism, credential in mechanisms.items()})

    def _read_user(self, user: str) -> dict[str, ScramCredential]:
        try:
            data, _ = self.zk.get(f"{CONFIG_USERS}/{user}")
        except NoNodeError:
            return {}
        return _credentials(user, data)

    def _users_changed(self, children: list[str]) -> None:
        for user in children:
            if user not in self._watched:
                self._watched.add(user)
                DataWatch(self.zk, f"{CONFIG_USERS}/{user}", partial(self._user_node, user))

    def _user_node(self, user: str, data: bytes | None, _stat: object, _event: object = None) -> bool:
        return self._user_changed(user, _credentials(user, data))

    def _user_changed(self, user: str, credentials: dict[str, ScramCredential]) -> bool:
        with self._lock:
            users = dict(self._users)
            if credentials:
                users[user] = credentials
            else:
                users.pop(user, None)
            self._users = users
        return True  # keep watching


def _credentials(user: str, data: bytes | None) -> dict[str, ScramCredential]:
    if not data:
        return {}
    try:
        config = json.loads(data).get("config", {})
        return {m: ScramCredential.from_kafka_string(v) for m, v in config.items() if m in MECHANISMS}
    except ValueError as exc:
        log.warning("Ignoring the unreadable SCRAM credentials of user %s in %s: %s", user, CONFIG_USERS, exc)
        return {}
