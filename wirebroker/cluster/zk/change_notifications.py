"""Change notifications (Kafka's ZkNodeChangeNotificationListener): persistent sequential znodes that tell every
broker to re-read something from ZooKeeper.

A writer changes the data first, then creates `<path>/<prefix><seq>` naming what changed (`notify`); every broker
watches `<path>` and hands each notification it has not seen, in sequence order, to its handler, which re-reads the
data it names. Notifications already there when the listener starts are taken as seen: the broker reads the data
itself after starting the listener, so nothing written before or after is missed. Processed notifications older
than Kafka's changeExpirationMs (15 minutes) are deleted, as Kafka's listener purges them, so the paths do not grow.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import NoNodeError
from kazoo.protocol.states import WatchedEvent

log = logging.getLogger(__name__)

CHANGE_EXPIRATION_MS = 15 * 60 * 1000  # Kafka's ZkNodeChangeNotificationListener.changeExpirationMs


def notify(zk: KazooClient, path: str, prefix: str, data: bytes) -> None:
    """Create the next `<path>/<prefix><seq>` notification carrying `data`."""
    zk.create(f"{path}/{prefix}", data, sequence=True, makepath=True)


class ChangeNotificationListener:
    """Hands each new notification under `path` to `handler` (its data), on one of kazoo's worker threads."""

    def __init__(self, zk: KazooClient, path: str, prefix: str, handler: Callable[[bytes], None]) -> None:
        self.zk = zk
        self.path = path
        self.prefix = prefix
        self.handler = handler
        self._last_seen = ""
        self._lock = threading.Lock()  # one pass over the notifications at a time

    def start(self) -> None:
        self.zk.ensure_path(self.path)
        self._last_seen = max(self._children(watch=False), default="")
        self._children(watch=True)
        # A new session (after an expiry) has lost the watch: look again, and leave a new one.
        self.zk.add_listener(lambda state: self._on_change(None) if state == KazooState.CONNECTED else None)

    def _children(self, watch: bool) -> list[str]:
        children = self.zk.get_children(self.path, watch=self._on_change if watch else None)
        return [child for child in children if child.startswith(self.prefix)]

    def _on_change(self, _: WatchedEvent | None) -> None:
        # Kazoo's watch and state callbacks may not block on ZooKeeper calls: do the reads on a worker.
        self.zk.handler.spawn(self._process)

    def _process(self) -> None:
        with self._lock:
            try:
                children = sorted(self._children(watch=True))
                for child in children:
                    if child > self._last_seen:
                        self._apply(child)
                        self._last_seen = child
                self._purge(children)
            except Exception:
                log.exception("Processing change notifications in %s failed", self.path)

    def _apply(self, child: str) -> None:
        try:
            data, _ = self.zk.get(f"{self.path}/{child}")
        except NoNodeError:
            return  # purged by another broker: the change is older than any broker needs
        self.handler(data)

    def _purge(self, children: list[str]) -> None:
        """Delete the seen notifications older than CHANGE_EXPIRATION_MS, oldest first, up to the first younger one
        (every broker may; the first wins)."""
        expired_before = time.time() * 1000 - CHANGE_EXPIRATION_MS
        for child in children:
            if child > self._last_seen:
                return
            try:
                if self.zk.get(f"{self.path}/{child}")[1].ctime >= expired_before:
                    return
                self.zk.delete(f"{self.path}/{child}")
            except NoNodeError:
                continue
