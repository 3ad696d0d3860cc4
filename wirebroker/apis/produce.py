"""Produce: API key 0, versions 3-13 served; 0-2 advertised (old librdkafka needs min 0) and refused per request.

Behaviour:
- Each partition's records field is whole RecordBatch v2 batches, appended as bytes: the log checks CRC, lengths
  and producer sequences, assigns offsets and the leader epoch in place, and never decodes a record.
- acks must be -1, 0 or 1 (else INVALID_REQUIRED_ACKS for every partition). acks=0 gets no answer; but if any
  partition failed, the connection is closed so the producer learns something went wrong (Kafka does the same).
- acks=-1 waits in the produce purgatory until the high watermark covers the append (every in-sync replica has
  it), up to timeout_ms (then REQUEST_TIMED_OUT). With fewer in-sync replicas than the topic's min.insync.replicas
  it is refused before the append (NOT_ENOUGH_REPLICAS), or answered NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR
  shrank below it while waiting.
- A partition this broker does not lead (a follower, or a leader that lost its leadership while the request
  waited): NOT_LEADER_OR_FOLLOWER; v10+ names the current leader and its endpoint (KIP-951, current_leader.py),
  older clients refresh their metadata.
- Unknown topics are UNKNOWN_TOPIC_OR_PARTITION: Produce never auto-creates (Metadata does).
- A duplicate batch of an idempotent producer is answered with the offset it got the first time.
- With an authorizer (KafkaApis.handleProduceRequest): transactional records need WRITE on the transactional id,
  else every partition gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED (CVE-2018-17196); each topic needs WRITE, else
  TOPIC_AUTHORIZATION_FAILED (before its existence is looked at). An idempotent producer needs nothing more here:
  its InitProducerId was checked (Kafka 3.0+, KIP-679).
Version notes:
- v0-2 wrote message format v0/v1, which this broker does not store: UNSUPPORTED_VERSION per partition.
- v3+ carries transactional_id; v5+ log_start_offset; v8+ record_errors and error_message (KIP-467);
  v9+ flexible; v10+ current_leader and node_endpoints on NOT_LEADER_OR_FOLLOWER (KIP-951); v11+ may answer
  TRANSACTION_ABORTABLE (KIP-890); v12 is v11 for a producer of transactions v1, the only kind here (this broker
  finalizes no transaction.version, so no client relies on v12's implicit AddPartitionsToTxn); v13+ topics by id
  (KIP-516): an id this broker does not know is UNKNOWN_TOPIC_ID for each of its partitions, appended nowhere.
"""

from __future__ import annotations

from typing import Any

from wirebroker.apis.context import NO_RESPONSE, CloseConnection, RequestContext
from wirebroker.apis.current_leader import point_to_leaders
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.produce import ProduceRequest, ProduceResponse
from wirebroker.protocol.records import read_header
from wirebroker.replica.manager import AppendResult

API_KEY = 0
FIRST_V2_FORMAT_VERSION = 3
VALID_ACKS = (-1, 0, 1)
FIRST_CURRENT_LEADER_VERSION = 10  # KIP-951
FIRST_TOPIC_ID_VERSION = 13  # KIP-516

_PartitionResponse = ProduceResponse.PartitionProduceResponse
_TopicResponse = ProduceResponse.TopicProduceResponse


def handle(ctx: RequestContext, request: ProduceRequest) -> None:
    if ctx.api_version >= FIRST_TOPIC_ID_VERSION:
        view = ctx.broker.cluster_view
        for topic in request.topic_data:
            known = view.topic_by_id(topic.topic_id)
            topic.name = known.name if known is not None else None
    entries = [(topic.name, p.index, p.records) for topic in request.topic_data for p in topic.partition_data]
    if ctx.api_version < FIRST_V2_FORMAT_VERSION:
        ctx.respond(_answer(ctx, request, [AppendResult(ErrorCode.UNSUPPORTED_VERSION)] * len(entries)))
    elif request.acks not in VALID_ACKS:
        ctx.respond(_answer(ctx, request, [AppendResult(ErrorCode.INVALID_REQUIRED_ACKS)] * len(entries)))
    elif _has_transactional_records(entries) and not (
            request.transactional_id is not None
            and ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id)):
        ctx.respond(_answer(ctx, request, [AppendResult(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)] * len(entries)))
    else:
        writable = ctx.authorized(AclOperation.WRITE, ResourceType.TOPIC, (e[0] for e in entries if e[0] is not None))
        refused = [ErrorCode.NONE if topic in writable
                   else ErrorCode.UNKNOWN_TOPIC_ID if topic is None else ErrorCode.TOPIC_AUTHORIZATION_FAILED
                   for topic, _, _ in entries]
        ctx.broker.replica_manager.append_records(
            [e for e, code in zip(entries, refused, strict=True) if code == ErrorCode.NONE], request.acks,
            request.timeout_ms, lambda results: ctx.respond(_answer(ctx, request, _merged(refused, results))))


def _has_transactional_records(entries: list[tuple[str | None, int, Any]]) -> bool:
    """Kafka's RequestUtils.hasTransactionalRecords: some partition's first batch is transactional. Such a
    request needs WRITE on its transactional id (CVE-2018-17196); a batch too short to tell is the log's to refuse."""
    for _, _, records in entries:
        try:
            if records and read_header(records).is_transactional:
                return True
        except KafkaError:
            continue
    return False


def _merged(refused: list[int], appended: list[AppendResult]) -> list[AppendResult]:
    """One result per entry: the appended ones' in order, the refusal (an unknown topic id, no WRITE on the
    topic) of those not appended."""
    results = iter(appended)
    return [next(results) if code == ErrorCode.NONE else AppendResult(code) for code in refused]


def _answer(ctx: RequestContext, request: ProduceRequest, results: list[AppendResult]) -> ProduceResponse | object:
    if request.acks == 0:
        failed = [r for r in results if r.error_code]
        if failed:
            return CloseConnection(
                f"produce with acks=0 failed ({ErrorCode(failed[0].error_code).name}: {failed[0].message})"
            )
        return NO_RESPONSE
    responses = []
    position = 0
    for topic in request.topic_data:
        partitions = []
        for p in topic.partition_data:
            partitions.append(_partition_response(p.index, results[position]))
            position += 1
        responses.append(_TopicResponse(name=topic.name or "", topic_id=topic.topic_id,
                                        partition_responses=partitions))
    response = ProduceResponse(responses=responses)
    if ctx.api_version >= FIRST_CURRENT_LEADER_VERSION:
        response.node_endpoints = point_to_leaders(
            ctx, ((t.name, p.index, p) for t in response.responses for p in t.partition_responses
                  if p.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER),
            ProduceResponse.LeaderIdAndEpoch, ProduceResponse.NodeEndpoint)
    return response


def _partition_response(index: int, result: AppendResult) -> ProduceResponse.PartitionProduceResponse:
    info = result.info
    if info is None:
        return _PartitionResponse(index=index, error_code=result.error_code, base_offset=-1,
                                  error_message=result.message)
    return _PartitionResponse(
        index=index,
        error_code=result.error_code,
        base_offset=info.first_offset,
        log_append_time_ms=info.log_append_time,
        log_start_offset=info.log_start_offset,
    )


serve(API_KEY, handle)
