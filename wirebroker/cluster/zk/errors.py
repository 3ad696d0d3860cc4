"""The ZooKeeper controller's own errors, each carrying the Kafka error code it answers with."""

from __future__ import annotations

from wirebroker.protocol.errors import ErrorCode, StaleControllerEpochError


# Kafka's ControllerMovedException: /controller_epoch moved past this broker's epoch, so ZooKeeper refused its
# write. STALE_CONTROLLER_EPOCH on the wire, as Kafka's Errors maps it; its docstring is its default message.
class ControllerMovedError(StaleControllerEpochError, code=ErrorCode.STALE_CONTROLLER_EPOCH):
    """The controller moved to another broker."""
