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
  TRANSACTION_ABORTABLE (KIP-890); v12+ comes from producers of transaction protocol 2 (transaction.version 2,
  KIP-890 part 2), which send no AddPartitionsToTxn: see below; v13+ topics by id (KIP-516): an id this broker does
  not know is UNKNOWN_TOPIC_ID for each of its partitions, appended nowhere.
Transactional records at v12+ (Kafka's TransactionSupportedOperation ADD_PARTITION): each partition whose producer
  state has no transaction of the batch's producer id open at its epoch is added to the transaction at the
  coordinator first (replica/txn_verification.py, coordinator/transaction_partition_adds.py), and appended only once
  added. Its refusals, as Kafka's handleProduceAppend translates them: INVALID_TXN_STATE ("Partition was not added to
  the transaction"); NETWORK_EXCEPTION, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS and NOT_COORDINATOR
  as NOT_ENOUGH_REPLICAS, which every producer retries; CONCURRENT_TRANSACTIONS (retried for 100 ms by the broker
  first) and INVALID_PRODUCER_EPOCH (PRODUCER_FENCED at the coordinator) as they are. Two producers in one request:
  INVALID_PRODUCER_ID_MAPPING everywhere.
Transactional records up to v11 (KIP-890 part 1, transaction.partition.verification.enable, default true; Kafka's
  operations DEFAULT_ERROR and GENERIC_ERROR_SUPPORTED): the producer's own AddPartitionsToTxn should have put the
  partition in the transaction; the same first-batch check as above asks the coordinator only to verify that it did
  (AddPartitionsToTxn verify_only), so a late or stray batch cannot open a transaction the coordinator will never end
  (a hanging transaction). A partition not in the ongoing transaction is refused, nothing appended: v11
  TRANSACTION_ABORTABLE, older versions INVALID_TXN_STATE ("Partition was not added to the transaction");
  CONCURRENT_TRANSACTIONS is not retried and answered NOT_ENOUGH_REPLICAS like the other coordinator trouble. With
  the key false such records are appended unchecked, as before KIP-890.
Both: the partition's producer state starts a verification (a VerificationGuard, log/verification_guard.py) before
  the coordinator is asked, and every transactional append of the request carries its partition's guard (SENTINEL
  where the transaction was open already). If the transaction ended (its marker was written) while the coordinator
  answered or the other partitions were added, the log refuses the batch, INVALID_TXN_STATE "Record was not part of
  an ongoing transaction", as Kafka's UnifiedLog does: the producer aborts instead of leaving a hanging transaction.
"""

from __future__ import annotations

from typing import Any

from wirebroker.apis.context import NO_RESPONSE, CloseConnection, RequestContext
from wirebroker.apis.current_leader import point_to_leaders
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.coordinator.transaction_partition_adds import (
    VERIFICATION_KEY,
    operation_for_version,
)
from wirebroker.log.verification_guard import SENTINEL, VerificationGuard
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.produce import FlatProduceRequest, ProduceResponse
from wirebroker.protocol.records import read_header
from wirebroker.replica.manager import AppendResult
from wirebroker.replica.txn_verification import (
    start_verification,
    transactional_producer,
)

API_KEY = 0
FIRST_V2_FORMAT_VERSION = 3
VALID_ACKS = (-1, 0, 1)
FIRST_CURRENT_LEADER_VERSION = 10  # KIP-951
FIRST_TRANSACTION_ABORTABLE_VERSION = 11  # KIP-890: TRANSACTION_ABORTABLE reaches the producer
FIRST_IMPLICIT_ADD_VERSION = 12  # KIP-890 part 2: the leader adds a transaction's partitions
FIRST_TOPIC_ID_VERSION = 13  # KIP-516
_REFUSED_UNKNOWN_ID = AppendResult(ErrorCode.UNKNOWN_TOPIC_ID)
_REFUSED_UNAUTHORIZED = AppendResult(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
_RETRIED_AS_NOT_ENOUGH_REPLICAS = frozenset({ErrorCode.NETWORK_EXCEPTION, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                                             ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR})

_PartitionResponse = ProduceResponse.PartitionProduceResponse
_TopicResponse = ProduceResponse.TopicProduceResponse


def handle(ctx: RequestContext, request: FlatProduceRequest) -> None:
    """`request.partition_data`: (topic name, or its id from v13, partition index, records) per partition, as the
    dispatcher's flat reader reads them (codegen/flat.py); `entries` the same with the topic's name (None for an id
    this broker does not know)."""
    entries = request.partition_data
    if ctx.api_version >= FIRST_TOPIC_ID_VERSION:
        names = _names_of_ids(ctx, {topic_id for topic_id, _, _ in entries})
        entries = [(names[topic_id], index, records) for topic_id, index, records in entries]
    if ctx.api_version < FIRST_V2_FORMAT_VERSION:
        ctx.respond(_answer(ctx, request, entries, [AppendResult(ErrorCode.UNSUPPORTED_VERSION)] * len(entries)))
    elif request.acks not in VALID_ACKS:
        ctx.respond(_answer(ctx, request, entries, [AppendResult(ErrorCode.INVALID_REQUIRED_ACKS)] * len(entries)))
    elif (transactional := _has_transactional_records(entries)) and not (
            request.transactional_id is not None
            and ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id)):
        ctx.respond(_answer(ctx, request, entries,
                            [AppendResult(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)] * len(entries)))
    else:
        writable = ctx.authorized(AclOperation.WRITE, ResourceType.TOPIC, (e[0] for e in entries if e[0] is not None))
        refused = [None if topic in writable
                   else _REFUSED_UNKNOWN_ID if topic is None else _REFUSED_UNAUTHORIZED
                   for topic, _, _ in entries]
        if transactional and (ctx.api_version >= FIRST_IMPLICIT_ADD_VERSION or ctx.broker.config[VERIFICATION_KEY]):
            _add_then_append(ctx, request, entries, refused)
        else:
            _append(ctx, request, entries, refused)


def _names_of_ids(ctx: RequestContext, topic_ids: set[bytes]) -> dict[bytes, str | None]:
    view = ctx.broker.cluster_view
    return {topic_id: known.name if (known := view.topic_by_id(topic_id)) is not None else None
            for topic_id in topic_ids}


def _append(ctx: RequestContext, request: FlatProduceRequest, entries: list[tuple[str | None, int, Any]],
            refused: list[AppendResult | None], guards: list[VerificationGuard] | None = None) -> None:
    """Append the entries not refused; `guards` (one per entry) those of a verified transactional request."""
    ctx.broker.replica_manager.append_records(
        [e for e, refusal in zip(entries, refused, strict=True) if refusal is None], request.acks,
        request.timeout_ms, lambda results: ctx.respond(_answer(ctx, request, entries, _merged(refused, results))),
        verification_guards=None if guards is None else [
            guard for guard, refusal in zip(guards, refused, strict=True) if refusal is None])


def _add_then_append(ctx: RequestContext, request: FlatProduceRequest, entries: list[tuple[str | None, int, Any]],
                     refused: list[AppendResult | None]) -> None:
    """KIP-890: the partitions of the transaction not yet open here are added at the coordinator (part 2, v12+) or
    verified to be in the transaction there (part 1, up to v11), then the records are appended (those of a partition
    the add or the verification refused are not). Each append carries its partition's verification guard, so one
    whose transaction ended in the meantime is refused by the log."""
    replica_manager = ctx.broker.replica_manager
    try:
        producer = transactional_producer(records for (_, _, records), refusal in zip(entries, refused, strict=True)
                                          if refusal is None)
    except KafkaError as exc:
        ctx.respond(_answer(ctx, request, entries, [AppendResult(exc.code, str(exc))] * len(entries)))
        return
    if producer is None:  # no partition's first batch is transactional (the log refuses the malformed ones)
        _append(ctx, request, entries, refused)
        return
    supports_epoch_bump = ctx.api_version >= FIRST_IMPLICIT_ADD_VERSION  # transaction protocol 2
    guards = [SENTINEL] * len(entries)
    to_add: dict[tuple[str, int], int] = {}  # (topic, partition) -> position in entries
    for position, ((topic, index, _), refusal) in enumerate(zip(entries, refused, strict=True)):
        if refusal is None and topic is not None:
            try:
                guards[position] = start_verification(replica_manager, topic, index, *producer, supports_epoch_bump)
            except KafkaError as exc:
                refused[position] = AppendResult(exc.code)
                continue
            if guards[position] is not SENTINEL:
                to_add[(topic, index)] = position
    if not to_add:
        _append(ctx, request, entries, refused, guards)
        return

    def added(errors: dict[tuple[str, int], int]) -> None:
        for tp, position in to_add.items():
            if tp in errors:
                refused[position] = _add_refusal(errors[tp], ctx.api_version)
        _append(ctx, request, entries, refused, guards)

    operation = operation_for_version(ctx.api_version, FIRST_TRANSACTION_ABORTABLE_VERSION, FIRST_IMPLICIT_ADD_VERSION)
    ctx.broker.transaction_partition_adds.add(request.transactional_id, *producer, list(to_add), added, operation)


def _add_refusal(code: int, version: int) -> AppendResult:
    """A coordinator's refusal of an implicit add or a verification as the producer gets it (Kafka's
    handleProduceAppend): retriable coordinator trouble as NOT_ENOUGH_REPLICAS, which every producer retries without
    a metadata refresh, and so CONCURRENT_TRANSACTIONS of a verification (an add's is answered as it is, after the
    broker's retries)."""
    if code == ErrorCode.INVALID_TXN_STATE:
        return AppendResult(code, "Partition was not added to the transaction")
    if code in _RETRIED_AS_NOT_ENOUGH_REPLICAS or (
            code == ErrorCode.CONCURRENT_TRANSACTIONS and version < FIRST_IMPLICIT_ADD_VERSION):
        return AppendResult(ErrorCode.NOT_ENOUGH_REPLICAS, "Unable to verify the partition has been added to the "
                                                           f"transaction. Underlying error: {ErrorCode(code).name}")
    return AppendResult(code)


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


def _merged(refused: list[AppendResult | None], appended: list[AppendResult]) -> list[AppendResult]:
    """One result per entry: the appended ones' in order, the refusal (an unknown topic id, no WRITE on the
    topic, the transaction's add refused) of those not appended."""
    results = iter(appended)
    return [next(results) if refusal is None else refusal for refusal in refused]


def _answer(ctx: RequestContext, request: FlatProduceRequest, entries: list[tuple[str | None, int, Any]],
            results: list[AppendResult]) -> ProduceResponse | object:
    """The response: one topic per run of partitions of the same topic in the request (Kafka answers per topic
    too), named as the request named it, by id from v13."""
    if request.acks == 0:
        failed = [r for r in results if r.error_code]
        if failed:
            return CloseConnection(
                f"produce with acks=0 failed ({ErrorCode(failed[0].error_code).name}: {failed[0].message})"
            )
        return NO_RESPONSE
    responses: list[ProduceResponse.TopicProduceResponse] = []
    by_id = ctx.api_version >= FIRST_TOPIC_ID_VERSION
    partitions: list[ProduceResponse.PartitionProduceResponse] = []
    previous = None
    for (topic, index, _), (name, _, _), result in zip(request.partition_data, entries, results, strict=True):
        if topic != previous:
            partitions = []
            responses.append(_TopicResponse(name=name or "", topic_id=topic if by_id else None,
                                            partition_responses=partitions))
            previous = topic
        partitions.append(_partition_response(index, result))
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
