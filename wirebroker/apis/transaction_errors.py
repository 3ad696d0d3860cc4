"""What the transaction APIs share: a coordinator's error as a client of the request's version knows it."""

from __future__ import annotations

from wirebroker.protocol.errors import ErrorCode


def client_error(code: int, version: int, first_producer_fenced_version: int) -> int:
    """PRODUCER_FENCED (KIP-588) only for the versions that know it; INVALID_PRODUCER_EPOCH before, as Kafka's
    KafkaApis answers older clients."""
    if code == ErrorCode.PRODUCER_FENCED and version < first_producer_fenced_version:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return code
