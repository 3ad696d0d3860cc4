"""ListPartitionReassignments: API key 46, version 0.

Behaviour (Kafka's ControllerApis.handleListPartitionReassignments and
ReplicationControlManager.listPartitionReassignments):
- The ongoing reassignments of the named partitions (a null topic list: of every partition). With one broker no
  reassignment is ever in progress (AlterPartitionReassignments completes at once), so the answer lists none;
  unknown topics and partitions are left out silently, as in Kafka.
- ZooKeeper mode: the controller lists the partitions whose assignment names adding or removing replicas, with
  all their replicas; NOT_CONTROLLER at the top on another broker.
- The caller needs DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
Version notes:
- v0 only, flexible.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wirebroker.apis.authorization import refused_request_message
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation
from wirebroker.log.files import TopicPartition
from wirebroker.protocol.errors import ErrorCode, KafkaError, NotControllerError
from wirebroker.protocol.messages.list_partition_reassignments import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)

if TYPE_CHECKING:  # ZooKeeper mode's data, not imported by a single node (start-up time)
    from wirebroker.cluster.zk.data import ReplicaAssignment

API_KEY = 46

_Ongoing = ListPartitionReassignmentsResponse.OngoingPartitionReassignment


def handle(ctx: RequestContext,
           request: ListPartitionReassignmentsRequest) -> ListPartitionReassignmentsResponse | None:
    if not ctx.authorize(AclOperation.DESCRIBE):
        return ListPartitionReassignmentsResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, topics=[],
                                                  error_message=refused_request_message(ctx, AclOperation.DESCRIBE))
    controller = ctx.broker.kafka_controller
    if controller is None:
        return ListPartitionReassignmentsResponse(error_code=ErrorCode.NONE, error_message=None, topics=[])
    if not controller.is_active:
        error = NotControllerError()
        return ListPartitionReassignmentsResponse(error_code=error.code, error_message=str(error), topics=[])
    wanted = (None if request.topics is None
              else [TopicPartition(t.name, p) for t in request.topics for p in t.partition_indexes])

    def respond(ongoing: dict[TopicPartition, ReplicaAssignment] | KafkaError) -> None:
        if isinstance(ongoing, KafkaError):
            ctx.respond(ListPartitionReassignmentsResponse(error_code=ongoing.code, error_message=str(ongoing),
                                                           topics=[]))
            return
        topics: dict[str, list[_Ongoing]] = {}
        for tp, assignment in sorted(ongoing.items()):
            topics.setdefault(tp.topic, []).append(_Ongoing(
                partition_index=tp.partition, replicas=list(assignment.replicas),
                adding_replicas=list(assignment.adding_replicas), removing_replicas=list(assignment.removing_replicas)))
        ctx.respond(ListPartitionReassignmentsResponse(error_code=ErrorCode.NONE, error_message=None, topics=[
            ListPartitionReassignmentsResponse.OngoingTopicReassignment(name=name, partitions=partitions)
            for name, partitions in topics.items()]))

    controller.list_partition_reassignments(wanted, respond)
    return None


serve(API_KEY, handle)
