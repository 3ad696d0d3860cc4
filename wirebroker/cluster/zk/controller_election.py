"""Controller election through /controller and /controller_epoch (Kafka's
KafkaZkClient.registerControllerAndIncrementControllerEpoch and KafkaController's elect/resign).

A candidate reads /controller_epoch (epoch E at znode version V; it creates it at epoch 0 if missing) and commits
one transaction: create /controller (ephemeral, `{"version":1,"brokerid":N,...}`) and set /controller_epoch to
E + 1 on condition that its version is still V. Exactly one candidate wins; it keeps the new version of
/controller_epoch (its epoch zkVersion) and fences every later write with it (fenced.py). Losers watch /controller
and try again when it disappears, which happens when the controller's session ends.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import BadVersionError, KazooException, NodeExistsError, NoNodeError
from kazoo.protocol.states import WatchedEvent, ZnodeStat

from wirebroker.cluster.zk import paths
from wirebroker.cluster.zk.data import (
    decode_controller,
    decode_controller_epoch,
    encode_controller,
    encode_controller_epoch,
)
from wirebroker.cluster.zk.errors import ControllerMovedError

log = logging.getLogger(__name__)

INITIAL_CONTROLLER_EPOCH = 0  # Kafka's KafkaController.InitialControllerEpoch


def get_controller_id(zk: KazooClient) -> int | None:
    try:
        data, _ = zk.get(paths.CONTROLLER)
    except NoNodeError:
        return None
    return decode_controller(data)


def get_controller_epoch(zk: KazooClient) -> tuple[int, int] | None:
    """(controller epoch, its znode version), or None before the first election."""
    try:
        data, stat = zk.get(paths.CONTROLLER_EPOCH)
    except NoNodeError:
        return None
    return decode_controller_epoch(data), stat.version


def register_controller_and_increment_epoch(zk: KazooClient, controller_id: int) -> tuple[int, int]:
    """Become controller: returns (new controller epoch, epoch zkVersion); ControllerMovedError if another won."""
    current = get_controller_epoch(zk)
    if current is None:
        try:
            zk.create(paths.CONTROLLER_EPOCH, encode_controller_epoch(INITIAL_CONTROLLER_EPOCH))
            current = (INITIAL_CONTROLLER_EPOCH, 0)
        except NodeExistsError:
            current = get_controller_epoch(zk)
            assert current is not None, f"{paths.CONTROLLER_EPOCH} existed, then went away"
    epoch, epoch_zk_version = current
    transaction = zk.transaction()
    transaction.create(paths.CONTROLLER, encode_controller(controller_id, int(time.time() * 1000)), ephemeral=True)
    transaction.set_data(paths.CONTROLLER_EPOCH, encode_controller_epoch(epoch + 1), epoch_zk_version)
    create_result, set_result = transaction.commit()
    if isinstance(set_result, ZnodeStat):
        return epoch + 1, set_result.version
    if isinstance(create_result, NodeExistsError) or isinstance(set_result, BadVersionError):
        return _check_controller_and_epoch(zk, controller_id, epoch + 1)
    raise create_result if isinstance(create_result, Exception) else set_result


def _check_controller_and_epoch(zk: KazooClient, controller_id: int, new_epoch: int) -> tuple[int, int]:
    """The transaction failed, yet it may have been a retry of our own committed one: we won if /controller names us
    and the epoch is the one we wrote."""
    if get_controller_id(zk) == controller_id:
        current = get_controller_epoch(zk)
        if current is not None and current[0] == new_epoch:
            return current
    raise ControllerMovedError("Controller moved to another broker. Aborting controller startup procedure")


Elected = Callable[[int, int], None]  # (controller epoch, epoch zkVersion)
_CHECK, _SESSION_LOST, _STOP = "check", "session lost", "stop"
RETRY_BACKOFF_S = 0.5  # after a ZooKeeper error (connection loss) before /controller is checked again


class ControllerElector:
    """Runs one broker's candidacy on a thread of its own, which handles every event in order (Kafka's
    ControllerEventManager): it checks /controller at start, on every watch event on it and on every (re)connection,
    and tries to become controller whenever it is missing; it resigns when its session is lost or /controller names
    another broker.

    `on_elected(epoch, epoch_zk_version)` and `on_resigned()` run on that thread. Watches are one-shot ZooKeeper
    watches re-armed by every check (kazoo's DataWatch would miss a create-and-delete between two of its reads).
    """

    def __init__(self, zk: KazooClient, broker_id: int, on_elected: Elected, on_resigned: Callable[[], None]) -> None:
        self.zk = zk
        self.broker_id = broker_id
        self.on_elected = on_elected
        self.on_resigned = on_resigned
        self.epoch = -1
        self.epoch_zk_version = -1
        self.active = False
        self._events: queue.Queue[str] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name=f"controller-elector-{broker_id}", daemon=True)

    def start(self) -> None:
        self.zk.add_listener(self._on_state)
        self._events.put(_CHECK)
        self._thread.start()

    def stop(self) -> None:
        """Stop competing; an active controller resigns and deletes its /controller so another broker takes over."""
        self.zk.remove_listener(self._on_state)
        self._events.put(_STOP)
        self._thread.join()

    def _run(self) -> None:
        while (event := self._events.get()) != _STOP:
            try:
                if event == _SESSION_LOST:
                    self._resign()
                else:
                    self._check()
            except KazooException as exc:  # connection loss, session expiry
                log.warning("Broker %d could not check %s (%r); checking again in %.1fs", self.broker_id,
                            paths.CONTROLLER, exc, RETRY_BACKOFF_S)
                time.sleep(RETRY_BACKOFF_S)
                self._events.put(_CHECK)
            except Exception:  # a failing callback must not end the candidacy
                log.exception("Broker %d failed to handle controller event '%s'", self.broker_id, event)
        if self.active:
            self._resign()
            try:
                if get_controller_id(self.zk) == self.broker_id:
                    self.zk.delete(paths.CONTROLLER)
            except (NoNodeError, KazooException):
                pass

    def _check(self) -> None:
        controller_id = self._watch_controller()
        if controller_id is None:
            self._resign()
            self._elect()
        elif controller_id != self.broker_id:
            self._resign()

    def _watch_controller(self) -> int | None:
        """The controller's id, leaving a watch on /controller for its next change."""
        while True:
            try:
                data, _ = self.zk.get(paths.CONTROLLER, watch=self._on_watch)
                return decode_controller(data)
            except NoNodeError:
                if self.zk.exists(paths.CONTROLLER, watch=self._on_watch) is None:
                    return None

    def _elect(self) -> None:
        try:
            epoch, epoch_zk_version = register_controller_and_increment_epoch(self.zk, self.broker_id)
        except ControllerMovedError:
            log.info("Broker %d lost the controller election to broker %s", self.broker_id, get_controller_id(self.zk))
            return
        self.epoch, self.epoch_zk_version, self.active = epoch, epoch_zk_version, True
        log.info("Broker %d is the controller, controller epoch %d (epoch zkVersion %d)", self.broker_id, epoch,
                 epoch_zk_version)
        self.on_elected(epoch, epoch_zk_version)

    def _resign(self) -> None:
        if self.active:
            self.active = False
            log.info("Broker %d resigns as controller (controller epoch %d)", self.broker_id, self.epoch)
            self.on_resigned()

    def _on_watch(self, event: WatchedEvent) -> None:
        self._events.put(_CHECK)

    def _on_state(self, state: KazooState) -> None:
        # Called on kazoo's connection thread, where nothing may block: queue the work.
        if state == KazooState.LOST:
            self._events.put(_SESSION_LOST)
        elif state == KazooState.CONNECTED:
            self._events.put(_CHECK)
