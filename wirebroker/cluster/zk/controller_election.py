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
import threading
import time
from collections.abc import Callable

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError
from kazoo.protocol.states import ZnodeStat

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


class ControllerElector:
    """Runs one broker's candidacy: tries at start, whenever /controller disappears, and in each new session.

    `on_elected(epoch, epoch_zk_version)` runs when this broker wins; `on_resigned()` when it stops being controller
    (its session expired, or /controller names another broker). Both run on kazoo's event thread: hand long work to
    the controller's own thread (Kafka's ControllerEventManager).
    """

    def __init__(self, zk: KazooClient, broker_id: int, on_elected: Elected, on_resigned: Callable[[], None]) -> None:
        self.zk = zk
        self.broker_id = broker_id
        self.on_elected = on_elected
        self.on_resigned = on_resigned
        self.epoch = -1
        self.epoch_zk_version = -1
        self.active = False
        self._stopped = False
        self._lock = threading.RLock()

    def start(self) -> None:
        self.zk.add_listener(self._on_state)
        self.zk.DataWatch(paths.CONTROLLER, self._on_controller_change)

    def stop(self) -> None:
        """Stop competing; an active controller resigns and deletes its /controller so another broker takes over."""
        with self._lock:
            self._stopped = True
            self.zk.remove_listener(self._on_state)
            if self.active:
                self._resign()
                try:
                    if get_controller_id(self.zk) == self.broker_id:
                        self.zk.delete(paths.CONTROLLER)
                except NoNodeError:
                    pass

    def _on_controller_change(self, data: bytes | None, stat: ZnodeStat | None) -> bool | None:
        with self._lock:
            if self._stopped:
                return False  # ends the DataWatch
            if data is None:
                self._elect()
            elif self.active and decode_controller(data) != self.broker_id:
                self._resign()
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
        self.active = False
        log.info("Broker %d resigns as controller (controller epoch %d)", self.broker_id, self.epoch)
        self.on_resigned()

    def _on_state(self, state: KazooState) -> None:
        # On kazoo's connection thread: no blocking call here.
        if state == KazooState.LOST:
            self.zk.handler.spawn(self._on_session_lost)

    def _on_session_lost(self) -> None:
        with self._lock:
            if self.active:
                self._resign()
