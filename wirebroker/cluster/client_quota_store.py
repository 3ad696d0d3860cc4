"""The cluster's client quotas (Kafka's ClientQuotaControlManager state), kept on disk by a single node.

File `<first log dir>/client_quotas.json`, rewritten atomically on every change; written only once a quota is set:

    {"version": 1, "entities": [{"entity": {"user": "alice", "client-id": null}, "quotas": {"producer_byte_rate": 1e6}}]}

A null name is the type's default (`--entity-default`). Readers (handler and network threads) see an immutable
snapshot; changes replace it under a lock and then tell the listeners (the broker's quota managers, server/quotas.py).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from wirebroker.cluster.client_quotas import Entity, Quotas, entity_of
from wirebroker.log.checkpoints import write_file_atomically

CLIENT_QUOTAS_FILE = "client_quotas.json"
FILE_VERSION = 1

Alterations = Mapping[Entity, Mapping[str, float | None]]  # entity -> key -> new value, None to remove


def apply_alterations(quotas: Quotas, alterations: Alterations) -> dict[Entity, dict[str, float]]:
    """The quotas after the alterations; an entity left without keys is gone."""
    result = {entity: dict(values) for entity, values in quotas.items()}
    for entity, ops in alterations.items():
        values = result.setdefault(entity, {})
        for key, value in ops.items():
            if value is None:
                values.pop(key, None)
            else:
                values[key] = float(value)
    return {entity: values for entity, values in result.items() if values}


class ClientQuotaStore:
    def __init__(self, log_dir: Path) -> None:
        self.path = log_dir / CLIENT_QUOTAS_FILE
        self._lock = threading.Lock()
        self._quotas: Quotas = self._load()
        self.listeners: list[Callable[[Quotas], None]] = []  # told the whole new snapshot after each change

    def quotas(self) -> Quotas:
        return self._quotas

    def alter(self, alterations: Alterations) -> None:
        with self._lock:
            quotas = apply_alterations(self._quotas, alterations)
            write_file_atomically(str(self.path), json.dumps({"version": FILE_VERSION, "entities": [
                {"entity": dict(entity), "quotas": values} for entity, values in quotas.items()
            ]}, indent=1))
            self._quotas = quotas
        for listener in self.listeners:
            listener(quotas)

    def _load(self) -> Quotas:
        if not self.path.exists():
            return {}
        state = json.loads(self.path.read_text())
        return {entity_of(item["entity"].items()): dict(item["quotas"]) for item in state["entities"]}
