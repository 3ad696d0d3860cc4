"""ZooKeeper writes fenced by the controller epoch (Kafka's KafkaZkClient.retryRequestsUntilConnected with an
expected controller epoch zkVersion, and unwrapResponseWithControllerEpochCheck).

Every write a controller makes travels in a ZooKeeper transaction (multi-op) of two operations:

    check /controller_epoch <the znode version this controller got when it won the election>
    the write itself (create, set_data or delete)

A newer controller has bumped /controller_epoch, so the check fails, ZooKeeper applies nothing, and the writer gets
ControllerMovedError: a controller that lost its session and came back still believing it leads can never change
partition state. The transactions of one batch are sent together and awaited together (pipelined), one per
znode, so that a version conflict on one partition leaves the others written.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import TypeVar

from kazoo.client import KazooClient, TransactionRequest
from kazoo.exceptions import RolledBackError

from wirebroker.cluster.zk import paths
from wirebroker.cluster.zk.errors import ControllerMovedError

K = TypeVar("K", bound=Hashable)
Write = Callable[[TransactionRequest], None]  # adds one operation to a transaction


def commit_fenced(zk: KazooClient, epoch_zk_version: int, writes: Mapping[K, Write]) -> dict[K, object]:
    """Commit `writes`, each in its own transaction behind the epoch check.

    Returns per key the write's result (a ZnodeStat for set_data, the path for create, True for delete) or the
    KazooException ZooKeeper answered for it (BadVersionError, NodeExistsError, NoNodeError ...). Raises
    ControllerMovedError when the epoch check failed for any of them.
    """
    pending = {}
    for key, write in writes.items():
        transaction = zk.transaction()
        transaction.check(paths.CONTROLLER_EPOCH, epoch_zk_version)
        write(transaction)
        pending[key] = transaction.commit_async()
    results = {}
    moved = False
    for key, async_result in pending.items():
        check_result, write_result = async_result.get()
        # A failed write rolls the check back (RolledBackError); only the check's own failure means "moved".
        moved = moved or (isinstance(check_result, Exception) and not isinstance(check_result, RolledBackError))
        results[key] = write_result
    if moved:
        raise ControllerMovedError(
            f"The controller moved to another broker: {paths.CONTROLLER_EPOCH} is no longer at version "
            f"{epoch_zk_version}, the write was refused")
    return results
