"""The cluster's SCRAM credentials (Kafka's ScramControlManager / the ZooKeeper /config/users entries), kept on disk.

Only salted, hashed credentials are kept (security/scram_credential.py), in Kafka's text form, per user and
mechanism. File `<first log dir>/scram_credentials.json`, rewritten atomically on every change; its per-user
entries have the shape of Kafka's ZooKeeper node /config/users/<user>:

    {"version": 1, "users": {"alice": {"SCRAM-SHA-512": "salt=...,stored_key=...,server_key=...,iterations=8192"}}}

Network threads look credentials up while a handler thread may change them: lookups read an immutable snapshot,
changes replace it under a lock.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from wirebroker.log.checkpoints import write_file_atomically

if TYPE_CHECKING:  # loaded with the first credential (hashlib and hmac are no part of a plain broker's start-up)
    from wirebroker.security.scram_credential import ScramCredential

SCRAM_CREDENTIALS_FILE = "scram_credentials.json"
FILE_VERSION = 1

Users = Mapping[str, Mapping[str, "ScramCredential"]]  # user -> mechanism name -> credential


class ScramCredentialStore:
    def __init__(self, log_dir: Path) -> None:
        self.path = log_dir / SCRAM_CREDENTIALS_FILE
        self._lock = threading.Lock()
        self._users: Users = self._load()

    def credential(self, mechanism: str, user: str) -> ScramCredential | None:
        return self._users.get(user, {}).get(mechanism)

    def users(self) -> Users:
        return self._users

    def alter(self, upsertions: Iterable[tuple[str, str, ScramCredential]],
              deletions: Iterable[tuple[str, str]]) -> None:
        """Apply (user, mechanism, credential) upsertions and (user, mechanism) deletions in one write."""
        with self._lock:
            users = {user: dict(mechanisms) for user, mechanisms in self._users.items()}
            for user, mechanism in deletions:
                users.get(user, {}).pop(mechanism, None)
            for user, mechanism, credential in upsertions:
                users.setdefault(user, {})[mechanism] = credential
            users = {user: mechanisms for user, mechanisms in users.items() if mechanisms}
            write_file_atomically(str(self.path), json.dumps({"version": FILE_VERSION, "users": {
                user: {m: c.to_kafka_string() for m, c in mechanisms.items()} for user, mechanisms in users.items()
            }}, indent=1))
            self._users = users

    def _load(self) -> Users:
        if not self.path.exists():
            return {}
        from wirebroker.security.scram_credential import ScramCredential

        state = json.loads(self.path.read_text())
        return {user: {m: ScramCredential.from_kafka_string(text) for m, text in mechanisms.items()}
                for user, mechanisms in state["users"].items()}
