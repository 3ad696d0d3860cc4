"""OffsetFetch: API key 9, versions 0-10.

Behaviour:
- The committed offset, leader epoch and metadata of each asked partition, -1/""/NONE where nothing was
  committed (or the group does not exist); every committed partition of the group when topics is null.
- A group-level error (COORDINATOR_LOAD_IN_PROGRESS; for consumer groups UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH)
  goes to the top level from v2 and, before v2, into every partition.
- require_stable (v7+): a partition with offsets pending in an open transaction (TxnOffsetCommit) is
  UNSTABLE_OFFSET_COMMIT, which the consumer retries until the transaction ends (KIP-447); without it, pending
  offsets are invisible and the last committed offset is answered.
Version notes:
- v1+ offsets come from __consumer_offsets (v0 meant ZooKeeper; served the same); v2+ null topics = all and a
  top-level error code; v5+ committed_leader_epoch (KIP-320); v6+ flexible; v7+ require_stable (KIP-447);
  v8+ several groups per request, answered per group (KIP-709); v9+ member id and epoch (KIP-848); v10+ topics
  named by id (KIP-848): an id this broker does not know is UNKNOWN_TOPIC_ID (offset -1) for each asked partition,
  after the group's other topics; for all of a group's offsets, a topic with no id any more (deleted) is left out,
  as Kafka's KafkaApis.fetchAllOffsetsForGroup does.
Authorization (with an authorizer): DESCRIBE on the group, else GROUP_AUTHORIZATION_FAILED; a requested topic
without DESCRIBE is TOPIC_AUTHORIZATION_FAILED per partition; all of a group's offsets leave such topics out.
"""

from __future__ import annotations

from typing import Any

from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.cluster.cluster_view import ClusterView
from wirebroker.coordinator.offset_metadata_manager import FetchedOffset
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchResponse,
)
from wirebroker.protocol.primitives import UUID_ZERO

API_KEY = 9
FIRST_TOP_LEVEL_ERROR_VERSION = 2
FIRST_BATCHED_VERSION = 8
FIRST_TOPIC_ID_VERSION = 10  # KIP-848

_R = OffsetFetchResponse


def handle(ctx: RequestContext, request: OffsetFetchRequest) -> OffsetFetchResponse:
    if ctx.api_version >= FIRST_BATCHED_VERSION:
        return _R(groups=[_group(ctx, group, request.require_stable) for group in request.groups])
    topics = None if request.topics is None else [(t.name, list(t.partition_indexes)) for t in request.topics]
    code, fetched = _fetch_described(ctx, request.group_id, topics, require_stable=request.require_stable)
    if code != ErrorCode.NONE and ctx.api_version < FIRST_TOP_LEVEL_ERROR_VERSION:
        fetched = [(name, [FetchedOffset(p, -1, -1, "", code) for p in partitions])
                   for name, partitions in topics or []]
    return _R(error_code=code, topics=[
        _R.OffsetFetchResponseTopic(name=name, partitions=[_partition(_R.OffsetFetchResponsePartition, o)
                                                           for o in offsets])
        for name, offsets in fetched])


def _group(ctx: RequestContext, group: OffsetFetchRequest.OffsetFetchRequestGroup,
           require_stable: bool) -> OffsetFetchResponse.OffsetFetchResponseGroup:
    view = ctx.broker.cluster_view
    by_id = ctx.api_version >= FIRST_TOPIC_ID_VERSION
    topics, unknown_ids = _asked_topics(view, group.topics, by_id)
    code, fetched = _fetch_described(ctx, group.group_id, topics, group.member_id, group.member_epoch, require_stable)
    answered = []
    for name, offsets in fetched:
        topic = view.topic(name) if by_id else None
        if by_id and topic is None:
            continue  # no id to name it by any more (a deleted topic)
        answered.append(_R.OffsetFetchResponseTopics(
            name=name, topic_id=topic.topic_id if topic is not None else UUID_ZERO,
            partitions=[_partition(_R.OffsetFetchResponsePartitions, o) for o in offsets]))
    if code == ErrorCode.NONE:
        answered += [_R.OffsetFetchResponseTopics(topic_id=t.topic_id, partitions=[
            _partition(_R.OffsetFetchResponsePartitions, FetchedOffset(p, -1, -1, "", ErrorCode.UNKNOWN_TOPIC_ID))
            for p in t.partition_indexes]) for t in unknown_ids]
    return _R.OffsetFetchResponseGroup(group_id=group.group_id, error_code=code, topics=answered)


def _fetch_described(ctx: RequestContext, group_id: str, topics: list[tuple[str, list[int]]] | None,
                     *args: Any, **kwargs: Any) -> tuple[int, list[tuple[str, list[FetchedOffset]]]]:
    """The coordinator's offsets as this request may see them (Kafka's KafkaApis.fetchOffsets): DESCRIBE on the
    group, else GROUP_AUTHORIZATION_FAILED; of all the group's topics those it may DESCRIBE; a requested topic it may
    not, TOPIC_AUTHORIZATION_FAILED per partition."""
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED, []
    coordinator = ctx.broker.group_coordinator
    if topics is None:
        code, fetched = coordinator.fetch_offsets(group_id, None, *args, **kwargs)
        described = ctx.authorized(AclOperation.DESCRIBE, ResourceType.TOPIC, (name for name, _ in fetched),
                                   log_denied=False)
        return code, [(name, offsets) for name, offsets in fetched if name in described]
    described = ctx.authorized(AclOperation.DESCRIBE, ResourceType.TOPIC, (name for name, _ in topics))
    code, fetched = coordinator.fetch_offsets(group_id, [t for t in topics if t[0] in described], *args, **kwargs)
    if code != ErrorCode.NONE:
        return code, fetched
    return code, fetched + [
        (name, [FetchedOffset(p, -1, -1, "", ErrorCode.TOPIC_AUTHORIZATION_FAILED) for p in partitions])
        for name, partitions in topics if name not in described]


def _asked_topics(view: ClusterView, topics: list[OffsetFetchRequest.OffsetFetchRequestTopics] | None, by_id: bool
                  ) -> tuple[list[tuple[str, list[int]]] | None, list[OffsetFetchRequest.OffsetFetchRequestTopics]]:
    """(name, partitions) of the asked topics (None: all of the group's), and those named by an unknown id."""
    if topics is None:
        return None, []
    named, unknown = [], []
    for topic in topics:
        name = topic.name
        if by_id:
            known = view.topic_by_id(topic.topic_id)
            if known is None:
                unknown.append(topic)
                continue
            name = known.name
        named.append((name, list(topic.partition_indexes)))
    return named, unknown


def _partition(struct: type, offset: FetchedOffset):
    return struct(partition_index=offset.partition, committed_offset=offset.offset,
                  committed_leader_epoch=offset.leader_epoch, metadata=offset.metadata, error_code=offset.error_code)


serve(API_KEY, off_network_thread(handle))
