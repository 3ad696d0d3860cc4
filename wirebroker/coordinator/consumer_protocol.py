"""The consumer protocol embedded in classic groups (Kafka's ConsumerProtocol): subscription and assignment bytes.

A classic consumer's JoinGroup carries, per assignor, a ConsumerProtocolSubscription, and its SyncGroup answer a
ConsumerProtocolAssignment, each as `version: int16` then the message at that version. A version newer than this
broker knows is read at the newest it knows (Kafka does the same: newer versions only append fields). The broker
reads them when it must understand a classic group (OffsetDelete, converting groups between the classic and the
consumer protocol) and writes assignments for classic members of a consumer group.
"""

from __future__ import annotations

import struct

from wirebroker.protocol.messages.consumer_protocol_assignment import (
    ConsumerProtocolAssignment,
)
from wirebroker.protocol.messages.consumer_protocol_subscription import (
    ConsumerProtocolSubscription,
)
from wirebroker.protocol.primitives import DecodeError

_VERSION = struct.Struct(">h")


def read_version(data: bytes) -> int:
    if len(data) < _VERSION.size:
        raise DecodeError("consumer protocol bytes shorter than their version")
    version = _VERSION.unpack_from(data, 0)[0]
    if version < 0:
        raise DecodeError(f"consumer protocol version {version}")
    return version


def parse_subscription(data: bytes) -> ConsumerProtocolSubscription:
    version = min(read_version(data), ConsumerProtocolSubscription.MAX_VERSION)
    return ConsumerProtocolSubscription.decode(memoryview(data)[_VERSION.size:], version)


def parse_assignment(data: bytes) -> dict[str, set[int]]:
    """Topic name -> partitions; empty bytes (a member with nothing) is an empty assignment."""
    if not data:
        return {}
    version = min(read_version(data), ConsumerProtocolAssignment.MAX_VERSION)
    assignment = ConsumerProtocolAssignment.decode(memoryview(data)[_VERSION.size:], version)
    return {tp.topic: set(tp.partitions) for tp in assignment.assigned_partitions}


def serialize_assignment(partitions: dict[str, set[int]], version: int) -> bytes:
    version = min(version, ConsumerProtocolAssignment.MAX_VERSION)
    assignment = ConsumerProtocolAssignment(assigned_partitions=[
        ConsumerProtocolAssignment.TopicPartition(topic=topic, partitions=sorted(ps))
        for topic, ps in sorted(partitions.items()) if ps])
    return _VERSION.pack(version) + assignment.encode(version)
