"""AlterPartitionReassignments: API key 45, versions 0-1.

Behaviour (Kafka's ControllerApis.handleAlterPartitionReassignments and
ReplicationControlManager.alterPartitionReassignments), per named partition, in request order:
- UNKNOWN_TOPIC_OR_PARTITION for a topic or partition that does not exist ("Unable to find a topic named t." /
  "Unable to find partition t:9.").
- Null replicas cancel a reassignment; none is ever in progress here, so NO_REASSIGNMENT_IN_PROGRESS.
- A target replica list is checked as a manual assignment (replica_assignment.py): INVALID_REPLICA_ASSIGNMENT for
  an empty list, a broker that is not registered (only this node is), or a broker named twice. The one valid
  target, this node alone, is every partition's current assignment, so the reassignment is complete at once:
  NONE, nothing moves.
- ZooKeeper mode (Kafka's KafkaController.onPartitionReassignment, cluster/zk/reassignment.py): the controller
  starts the reassignment (new replicas join, catch up, enter the ISR; then the leaving ones are stopped and
  deleted) and answers once it has begun; NOT_CONTROLLER at the top on another broker. A target must name distinct
  live brokers (INVALID_REPLICA_ASSIGNMENT); null cancels a reassignment in progress (back to the original
  replicas), else NO_REASSIGNMENT_IN_PROGRESS.
- allow_replication_factor_change false (v1+, KIP-860): after the assignment checks, a target whose length is not
  the partition's replication factor (that of the reassignment in progress, if any) is INVALID_REPLICATION_FACTOR,
  "The replication factor is changed from 3 to 2" (Kafka's ReplicationControlManager); the answer repeats the flag.
  A single node's one valid target never changes it.
- The caller needs ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED at the top.
Version notes:
- v0 flexible; v1 allow_replication_factor_change (KIP-860; v0 requests always allow it).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from wirebroker.apis.authorization import refused_request_message
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.apis.replica_assignment import check_manual_assignment
from wirebroker.cluster.acls import AclOperation
from wirebroker.log.files import TopicPartition
from wirebroker.protocol.errors import (
    ClusterAuthorizationFailedError,
    ErrorCode,
    InvalidReplicationFactorError,
    KafkaError,
    NoReassignmentInProgressError,
    NotControllerError,
    UnknownTopicOrPartitionError,
)
from wirebroker.protocol.messages.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
)

if TYPE_CHECKING:  # ZooKeeper mode's data, not imported by a single node (start-up time)
    from wirebroker.cluster.zk.data import ReplicaAssignment

log = logging.getLogger(__name__)

API_KEY = 45

_TopicResponse = AlterPartitionReassignmentsResponse.ReassignableTopicResponse
_PartitionResponse = AlterPartitionReassignmentsResponse.ReassignablePartitionResponse
_Partition = AlterPartitionReassignmentsRequest.ReassignablePartition


def handle(ctx: RequestContext,
           request: AlterPartitionReassignmentsRequest) -> AlterPartitionReassignmentsResponse | None:
    if not ctx.authorize(AclOperation.ALTER):
        return _response(request, ClusterAuthorizationFailedError(refused_request_message(ctx)))
    if ctx.broker.kafka_controller is not None:
        return _reassign_in_cluster(ctx, request)
    return _response(request, responses=[
        _TopicResponse(name=topic.name, partitions=[_reassign(ctx, topic.name, p) for p in topic.partitions])
        for topic in request.topics])


def _response(request: AlterPartitionReassignmentsRequest, error: KafkaError | None = None,
              responses: list[_TopicResponse] | None = None) -> AlterPartitionReassignmentsResponse:
    return AlterPartitionReassignmentsResponse(
        error_code=error.code if error else ErrorCode.NONE, error_message=str(error) if error else None,
        allow_replication_factor_change=request.allow_replication_factor_change, responses=responses or [])


def _reassign(ctx: RequestContext, topic_name: str, target: _Partition) -> _PartitionResponse:
    try:
        _check_reassignment(ctx, topic_name, target)
    except KafkaError as exc:
        log.info("Unable to alter partition reassignment for %s:%d asked by %s: %s", topic_name,
                 target.partition_index, ctx.client, exc)
        return _partition_response(target.partition_index, exc)
    return _partition_response(target.partition_index, None)


def _reassign_in_cluster(ctx: RequestContext,
                         request: AlterPartitionReassignmentsRequest) -> AlterPartitionReassignmentsResponse | None:
    """Hand the checked targets to the controller; answer when it has started them (None: answered later)."""
    controller = ctx.broker.kafka_controller
    if not controller.is_active:
        return _response(request, NotControllerError())
    live = ctx.broker.metadata_cache.alive_broker_ids()
    answers: dict[TopicPartition, KafkaError | None] = {}
    targets = {}
    for topic in request.topics:
        for target in topic.partitions:
            tp = TopicPartition(topic.name, target.partition_index)
            try:
                if target.replicas is not None:
                    check_manual_assignment(target.replicas, live, None)
                targets[tp] = target.replicas
            except KafkaError as exc:
                answers[tp] = exc

    def respond(started: dict[TopicPartition, KafkaError | None] | KafkaError) -> None:
        if isinstance(started, KafkaError):
            ctx.respond(_response(request, started))
            return
        answers.update(started)
        ctx.respond(_response(request, responses=[
            _TopicResponse(name=topic.name, partitions=[_partition_response(
                p.partition_index, answers[TopicPartition(topic.name, p.partition_index)]) for p in topic.partitions])
            for topic in request.topics]))

    def alter(ongoing: dict[TopicPartition, ReplicaAssignment] | KafkaError) -> None:
        if isinstance(ongoing, KafkaError):
            respond(ongoing)
            return
        for tp, error in _replication_factor_changes(ctx, targets, ongoing).items():
            answers[tp] = error
            del targets[tp]
        controller.alter_partition_reassignments(targets, respond)

    if request.allow_replication_factor_change:
        controller.alter_partition_reassignments(targets, respond)
    else:  # the replication factor of a reassignment in progress is its target's
        controller.list_partition_reassignments([tp for tp, t in targets.items() if t is not None], alter)
    return None


def _replication_factor_changes(ctx: RequestContext, targets: dict[TopicPartition, list[int] | None],
                                ongoing: dict[TopicPartition, ReplicaAssignment]
                                ) -> dict[TopicPartition, InvalidReplicationFactorError]:
    """The targets that would change their partition's replication factor (Kafka's
    validatePartitionReplicationFactorUnchanged)."""
    changes = {}
    for tp, target in targets.items():
        if target is None:
            continue
        if tp in ongoing:
            current = len(ongoing[tp].target_replicas)
        else:
            state = ctx.broker.metadata_cache.partition_state(tp.topic, tp.partition)
            if state is None:
                continue  # the controller answers for an unknown partition
            current = len(state.replicas)
        if current != len(target):
            changes[tp] = InvalidReplicationFactorError(
                f"The replication factor is changed from {current} to {len(target)}")
    return changes


def _partition_response(partition: int, error: KafkaError | None) -> _PartitionResponse:
    if error is None:
        return _PartitionResponse(partition_index=partition, error_code=ErrorCode.NONE, error_message=None)
    return _PartitionResponse(partition_index=partition, error_code=error.code, error_message=_message(error))


def _check_reassignment(ctx: RequestContext, topic_name: str, target: _Partition) -> None:
    topic = ctx.broker.metadata.topic(topic_name)
    if topic is None:
        raise UnknownTopicOrPartitionError(f"Unable to find a topic named {topic_name}.")
    if not 0 <= target.partition_index < topic.partitions:
        raise UnknownTopicOrPartitionError(f"Unable to find partition {topic_name}:{target.partition_index}.")
    if target.replicas is None:
        raise NoReassignmentInProgressError()
    check_manual_assignment(target.replicas, (ctx.broker.node_id,), None)


def _message(exc: KafkaError) -> str | None:
    """Kafka's ApiError.fromThrowable: no message where it would only repeat the code's default one."""
    return None if str(exc) == str(type(exc)()) else str(exc)


serve(API_KEY, handle)
