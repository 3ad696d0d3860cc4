"""CreatePartitions: API key 37, versions 0-3.

Behaviour (Kafka's ControllerApis.createPartitions and ReplicationControlManager.createPartitions):
- Grows each topic to `count` partitions. On a single node the new partitions' logs are created before the answer.
  In ZooKeeper mode (Kafka's ZkAdminManager.createPartitions) the new assignment is written to ZooKeeper and the
  answer waits, off the request thread, until this broker's metadata shows every partition of the topic with a
  leader, at most timeout_ms: topics not there by then get REQUEST_TIMED_OUT, as with timeout_ms <= 0 at once; the
  controller adds the partitions all the same (apis/delayed_topic_change.py).
- A topic named twice: INVALID_REQUEST "Duplicate topic name." for it. Unknown topic: UNKNOWN_TOPIC_OR_PARTITION.
  A count equal to or below the current one: INVALID_PARTITIONS with Kafka's messages. More than 10,000 new
  partitions for one topic: POLICY_VIOLATION (Kafka bounds a request's records the same way).
- Assignments, when given, must be one per new partition, each naming distinct registered brokers, as many as the
  topic's replication factor (INVALID_REPLICA_ASSIGNMENT, Kafka's messages): this broker alone on a single node,
  the brokers in /brokers/ids in ZooKeeper mode.
- validate_only checks and changes nothing, and is answered at once.
- With an authorizer: ALTER on the cluster, or else on the topic, or TOPIC_AUTHORIZATION_FAILED (Kafka's
  ControllerApis.createPartitions).
Version notes:
- v1 same as v0; v2+ flexible; v3 quota errors (THROTTLING_QUOTA_EXCEEDED, KIP-599; none here).
"""

from __future__ import annotations

import logging
from collections import Counter

from wirebroker.apis.context import RequestContext
from wirebroker.apis.delayed_topic_change import (
    TopicChange,
    answer_when_done,
    timed_out,
)
from wirebroker.apis.registry import serve
from wirebroker.apis.replica_assignment import (
    MAX_PARTITIONS_PER_REQUEST,
    check_manual_assignment,
)
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.errors import (
    ErrorCode,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidRequestError,
    KafkaError,
    PolicyViolationError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from wirebroker.protocol.messages.create_partitions import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
)

log = logging.getLogger(__name__)

API_KEY = 37

_Result = CreatePartitionsResponse.CreatePartitionsTopicResult


def handle(ctx: RequestContext, request: CreatePartitionsRequest) -> CreatePartitionsResponse | None:
    counts = Counter(topic.name for topic in request.topics)
    alterable = {name for name, n in counts.items() if n == 1}
    if not ctx.authorize(AclOperation.ALTER, log_denied=False):  # ALTER on the cluster alters every topic
        alterable = ctx.authorized(AclOperation.ALTER, ResourceType.TOPIC, alterable)
    outcomes = [(topic, _create(ctx, topic, request.validate_only))
                for topic in request.topics if topic.name in alterable]
    refused = [_result(name, InvalidRequestError("Duplicate topic name.")) for name, n in counts.items() if n > 1]
    refused += [_result(name, TopicAuthorizationFailedError("The topic authorization is failed."))
                   for name, n in counts.items() if n == 1 and name not in alterable]

    def answer(late: set[str]) -> CreatePartitionsResponse:
        return CreatePartitionsResponse(results=[
            _result(topic.name, timed_out(topic.name) if topic.name in late else error) for topic, error in outcomes
        ] + refused)

    changes = [] if request.validate_only else [
        TopicChange(topic.name, topic.count) for topic, error in outcomes if error is None]
    return answer_when_done(ctx, request.timeout_ms, changes, answer)


def _create(ctx: RequestContext, topic: CreatePartitionsRequest.CreatePartitionsTopic,
            validate_only: bool) -> KafkaError | None:
    try:
        _check(ctx, topic)
        assignment = [a.broker_ids for a in topic.assignments] if topic.assignments is not None else None
        ctx.broker.controller.create_partitions(topic.name, topic.count, validate_only, assignment)
    except KafkaError as exc:
        log.info("CreatePartitions of %s to %d from %s failed: %s", topic.name, topic.count, ctx.client, exc)
        return exc
    return None



def _check(ctx: RequestContext, wanted: CreatePartitionsRequest.CreatePartitionsTopic) -> None:
    topic = ctx.broker.metadata.topic(wanted.name)
    if topic is None:
        raise UnknownTopicOrPartitionError()
    if wanted.count == topic.partitions:
        raise InvalidPartitionsError(f"Topic already has {topic.partitions} partition(s).")
    if wanted.count < topic.partitions:
        raise InvalidPartitionsError(f"The topic {wanted.name} currently has {topic.partitions} partition(s); "
                                     f"{wanted.count} would not be an increase.")
    additional = wanted.count - topic.partitions
    if additional > MAX_PARTITIONS_PER_REQUEST:
        raise PolicyViolationError("Excessively large number of partitions per request.")
    if wanted.assignments is None:
        return
    if len(wanted.assignments) != additional:
        raise InvalidReplicaAssignmentError(f"Attempted to add {additional} additional partition(s), but only "
                                            f"{len(wanted.assignments)} assignment(s) were specified.")
    controller = ctx.broker.controller
    registered, replication_factor = controller.registered_brokers(), controller.replication_factor(wanted.name)
    for assignment in wanted.assignments:
        check_manual_assignment(assignment.broker_ids, registered, replication_factor)


def _result(name: str, error: KafkaError | None) -> _Result:
    return _Result(name=name, error_code=error.code if error else ErrorCode.NONE,
                   error_message=str(error) if error else None)


serve(API_KEY, handle)
