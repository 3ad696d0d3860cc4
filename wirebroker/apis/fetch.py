"""Fetch: API key 1, versions 4-18 served; 0-3 advertised (old librdkafka needs min 0) and refused per request.

Behaviour:
- Consumer fetches (replica id -1) read up to the high watermark, or the last stable offset for read_committed.
- Follower fetches (replica id >= 0; v15+ in ReplicaState) read up to the log end offset, and their fetch offsets
  tell the leader how far each follower got (ISR and high watermark, replica/partition.py). They are the same
  zero-copy file ranges as consumer fetches.
- A partition this broker does not lead: NOT_LEADER_OR_FOLLOWER, for consumers too (no fetch from followers);
  v16+ names the current leader and its endpoint there and on FENCED_LEADER_EPOCH (KIP-951, current_leader.py).
- Records are ranges of log segment files, sent by the network layer with os.sendfile: never copied, never decoded.
- Limits: partition_max_bytes per partition and max_bytes per response, except that the first partition with data
  returns at least one whole batch even if it is larger (KIP-74), so a large record never blocks a consumer.
- Not enough bytes for min_bytes and max_wait_ms > 0: the request waits in the fetch purgatory until appends bring
  enough bytes or max_wait_ms passes.
- Incremental fetch sessions (KIP-227): see replica/fetch_session.py.
- With an authorizer: a follower fetch needs CLUSTER_ACTION on the cluster, a consumer fetch READ on each topic;
  refused partitions are TOPIC_AUTHORIZATION_FAILED (checked before the topic's existence, as Kafka does).
- Offsets outside [log start offset, log end offset]: OFFSET_OUT_OF_RANGE, and the client's auto.offset.reset acts.
Version notes:
- v0-3 expect message formats v0/v1, which this broker does not store: UNSUPPORTED_VERSION per partition.
- v4+ isolation_level and aborted transactions; v5+ log_start_offset; v7+ sessions; v9+ current_leader_epoch
  (KIP-320); v11+ rack_id and preferred_read_replica (KIP-392, always -1: this broker is the only replica);
  v12+ flexible; v13+ topics by id (KIP-516), UNKNOWN_TOPIC_ID for ids this broker does not know; v15+ the
  replica id moves into ReplicaState (KIP-903); v18+ a follower names its own high watermark per partition, and
  one behind the leader's is answered at once instead of waiting for min_bytes (KIP-1166; consumers send none).
"""

from __future__ import annotations

from collections.abc import Hashable

from wirebroker.apis.context import RequestContext
from wirebroker.apis.current_leader import point_to_leaders
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.fetch import FetchRequest, FetchResponse
from wirebroker.replica.fetch_session import CachedPartition, FetchContext
from wirebroker.replica.manager import FetchRead
from wirebroker.replica.partition import READ_UNCOMMITTED

API_KEY = 1
FIRST_V2_FORMAT_VERSION = 4
FIRST_TOPIC_ID_VERSION = 13
FIRST_REPLICA_STATE_VERSION = 15
FIRST_NODE_ENDPOINTS_VERSION = 16  # KIP-951
FIRST_REPLICA_HIGH_WATERMARK_VERSION = 18  # KIP-1166
_SENT_ELSEWHERE = (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH)
UNKNOWN_OFFSET = -1

_Topic = FetchResponse.FetchableTopicResponse
_Partition = FetchResponse.PartitionData
_AbortedTransaction = FetchResponse.AbortedTransaction


def handle(ctx: RequestContext, request: FetchRequest) -> FetchResponse | None:
    version = ctx.api_version
    if version < FIRST_V2_FORMAT_VERSION:
        return _refuse_old_version(request)
    by_id = version >= FIRST_TOPIC_ID_VERSION
    requested = [
        ((t.topic_id if by_id else t.topic, p.partition),
         CachedPartition(p.fetch_offset, p.partition_max_bytes, p.current_leader_epoch))
        for t in request.topics
        for p in t.partitions
    ]
    forgotten = [
        (t.topic_id if by_id else t.topic, index) for t in request.forgotten_topics_data for index in t.partitions
    ]
    context = ctx.broker.fetch_sessions.new_context(request.session_id, request.session_epoch, requested, forgotten)
    if context.error_code:
        return FetchResponse(error_code=context.error_code, session_id=0)
    names = _topic_names(ctx, context, by_id)
    replica_id = _replica_id(version, request)
    denied = _denied_topics(ctx, replica_id, names)
    reads = [
        FetchRead(names[topic], index, cached.fetch_offset, cached.max_bytes, cached.current_leader_epoch)
        for (topic, index), cached in context.partitions
        if names[topic] is not None and names[topic] not in denied
    ]
    if replica_id >= 0 and version >= FIRST_REPLICA_HIGH_WATERMARK_VERSION:
        _set_replica_high_watermarks(reads, request, names, by_id)
    ctx.broker.replica_manager.fetch_messages(
        reads,
        request.max_bytes,
        request.min_bytes,
        request.max_wait_ms,
        request.isolation_level,
        lambda done: ctx.respond(_response(ctx, context, names, by_id, done, request.isolation_level, denied)),
        replica_id=replica_id,
    )
    return None


def _set_replica_high_watermarks(reads: list[FetchRead], request: FetchRequest, names: dict[Hashable, str | None],
                                 by_id: bool) -> None:
    """The follower's own high watermark of each partition it names in this request (KIP-1166)."""
    sent = {(names.get(t.topic_id if by_id else t.topic), p.partition): p.high_watermark
            for t in request.topics for p in t.partitions}
    for read in reads:
        read.replica_high_watermark = sent.get((read.topic, read.partition_index), read.replica_high_watermark)


def _denied_topics(ctx: RequestContext, replica_id: int, names: dict[Hashable, str | None]) -> set[str]:
    """The topics this request may not read (KafkaApis.handleFetchRequest): a follower (replica id >= 0) needs
    CLUSTER_ACTION on the cluster for every one (CVE-2018-1288: a consumer posing as a follower would read past
    the high watermark), a consumer READ on each."""
    if ctx.broker.authorizer is None:
        return set()  # every request may read everything: spare the per-topic checks
    known = {name for name in names.values() if name is not None}
    if replica_id >= 0:
        return set() if ctx.authorize(AclOperation.CLUSTER_ACTION) else known
    return known - ctx.authorized(AclOperation.READ, ResourceType.TOPIC, known)


def _replica_id(version: int, request: FetchRequest) -> int:
    if version >= FIRST_REPLICA_STATE_VERSION:
        return request.replica_state.replica_id if request.replica_state is not None else -1
    return request.replica_id


def _topic_names(ctx: RequestContext, context: FetchContext, by_id: bool) -> dict[Hashable, str | None]:
    """Session key's topic -> topic name, None for a topic id this broker does not know."""
    if not by_id:
        return {topic: topic for (topic, _), _ in context.partitions}
    names = {}
    for (topic_id, _), _ in context.partitions:
        if topic_id not in names:
            topic = ctx.broker.cluster_view.topic_by_id(topic_id)
            names[topic_id] = topic.name if topic else None
    return names


def _response(ctx: RequestContext, context: FetchContext, names: dict, by_id: bool, reads: list[FetchRead],
              isolation_level: int, denied: set[str]) -> FetchResponse:
    by_partition = {(r.topic, r.partition_index): r for r in reads}
    session = context.session
    topics: list = []
    last_topic: Hashable = None
    with_records = []
    for key, cached in context.partitions:
        topic, index = key
        allowed = names[topic] not in denied
        read = by_partition.get((names[topic], index)) if allowed else None
        if session is not None:  # the session remembers what it sent; a sessionless fetch answers everything
            has_records, changed = _remember(cached, read)
            if context.incremental and not changed:
                continue  # nothing new: no answer built for it (most of an incremental fetch's partitions)
            if has_records:
                with_records.append(key)
        if allowed:
            partition = _partition(index, read, isolation_level)
        else:
            partition = _error_partition(index, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        if topic != last_topic:
            topics.append(_Topic(topic_id=topic, topic=None) if by_id else _Topic(topic=topic))
            last_topic = topic
        topics[-1].partitions.append(partition)
    if with_records:
        ctx.broker.fetch_sessions.round_robin(session, with_records)
    response = FetchResponse(error_code=ErrorCode.NONE, session_id=context.session_id, responses=topics)
    if ctx.api_version >= FIRST_NODE_ENDPOINTS_VERSION:
        response.node_endpoints = point_to_leaders(
            ctx, ((t.topic or names.get(t.topic_id), p.partition_index, p)  # by id (v13+) the name is empty
                  for t in response.responses for p in t.partitions if p.error_code in _SENT_ELSEWHERE),
            FetchResponse.LeaderIdAndEpoch, FetchResponse.NodeEndpoint)
    return response


def _remember(cached: CachedPartition, read: FetchRead | None) -> tuple[bool, bool]:
    """Whether a session's partition answers records now, and whether its answer is news to the client (KIP-227:
    records, an error, or a moved high watermark, last stable offset or log start offset); the session remembers
    the offsets answered. No read (refused, unknown topic id) or a failed one answers an error and unknown offsets."""
    if read is None or read.error_code:
        return False, cached.changed_by(read.error_code if read else ErrorCode.UNKNOWN_TOPIC_ID, False,
                                        UNKNOWN_OFFSET, UNKNOWN_OFFSET, UNKNOWN_OFFSET)
    has_records = bool(read.data.records)
    return has_records, cached.changed_by(ErrorCode.NONE, has_records, read.high_watermark, read.last_stable_offset,
                                          read.log_start_offset)


def _partition(index: int, read: FetchRead | None, isolation_level: int) -> FetchResponse.PartitionData:
    if read is None:
        return _error_partition(index, ErrorCode.UNKNOWN_TOPIC_ID)
    if read.error_code:
        return _error_partition(index, read.error_code)
    data = read.data
    aborted = None
    if isolation_level != READ_UNCOMMITTED:
        aborted = [_AbortedTransaction(producer_id=a.producer_id, first_offset=a.first_offset)
                   for a in data.aborted_transactions or ()]
    return _Partition(
        partition_index=index,
        error_code=ErrorCode.NONE,
        high_watermark=read.high_watermark,
        last_stable_offset=read.last_stable_offset,
        log_start_offset=read.log_start_offset,
        aborted_transactions=aborted,
        records=data.records,
    )


def _error_partition(index: int, code: int) -> FetchResponse.PartitionData:
    return _Partition(partition_index=index, error_code=code, high_watermark=UNKNOWN_OFFSET,
                      last_stable_offset=UNKNOWN_OFFSET, log_start_offset=UNKNOWN_OFFSET, records=b"")


def _refuse_old_version(request: FetchRequest) -> FetchResponse:
    return FetchResponse(responses=[
        _Topic(topic=t.topic, partitions=[_error_partition(p.partition, ErrorCode.UNSUPPORTED_VERSION)
                                          for p in t.partitions])
        for t in request.topics
    ])


serve(API_KEY, handle)
