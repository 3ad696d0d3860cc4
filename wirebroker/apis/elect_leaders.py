"""ElectLeaders: API key 43, versions 0-2.

Behaviour (Kafka's ControllerApis.handleElectLeaders and ReplicationControlManager.electLeaders):
- Single node: every partition has this node as its only replica, in sync and leading: it has its preferred leader
  and a leader, so each named partition answers ELECTION_NOT_NEEDED, for a preferred and an unclean election alike.
  A topic or partition that does not exist answers UNKNOWN_TOPIC_OR_PARTITION ("No such topic as t" / "No such
  partition as t-9"). Partitions are answered in request order, a repeated one repeatedly, as in Kafka.
- ZooKeeper mode (Kafka's KafkaController.processReplicaLeaderElection): the controller elects; a broker that is
  not the active controller answers NOT_CONTROLLER for every partition. PREFERRED moves the lead back to the first
  assigned replica if it is a live ISR member (ELECTION_NOT_NEEDED when it leads, PREFERRED_LEADER_NOT_AVAILABLE
  when it cannot); UNCLEAN gives a leaderless partition a live replica, in sync or not (ELECTION_NOT_NEEDED when it
  has a leader, ELIGIBLE_LEADERS_NOT_AVAILABLE when no replica is live). The answer comes once the election is
  written.
- A null topic list asks for every partition; the partitions that need no election are then left out, so every
  topic is answered with an empty partition list.
- An election type other than PREFERRED (0) and UNCLEAN (1): INVALID_REQUEST "Unknown election type N" at the top
  and on every named partition (ElectLeadersRequest.getErrorResponse).
- The caller needs ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED at the top (v1+) and per partition.
Version notes:
- v0 elects preferred leaders only (no election type); v1+ election type and top-level error code (KIP-460);
  v2+ flexible.
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation
from wirebroker.log.files import TopicPartition
from wirebroker.protocol.errors import (
    ClusterAuthorizationFailedError,
    ElectionNotNeededError,
    ErrorCode,
    InvalidRequestError,
    KafkaError,
    NotControllerError,
    UnknownTopicOrPartitionError,
)
from wirebroker.protocol.messages.elect_leaders import (
    ElectLeadersRequest,
    ElectLeadersResponse,
)

API_KEY = 43

ELECTION_TYPES = (0, 1)  # Kafka's ElectionType: PREFERRED, UNCLEAN
UNCLEAN = 1

_TopicResult = ElectLeadersResponse.ReplicaElectionResult
_PartitionResult = ElectLeadersResponse.PartitionResult


def handle(ctx: RequestContext, request: ElectLeadersRequest) -> ElectLeadersResponse:
    if request.election_type not in ELECTION_TYPES:
        error = InvalidRequestError(f"Unknown election type {request.election_type}")
        return ElectLeadersResponse(error_code=error.code, replica_election_results=[
            _TopicResult(topic=t.topic, partition_result=[_result(p, error) for p in t.partitions])
            for t in request.topic_partitions or []])
    if not ctx.authorize(AclOperation.ALTER):
        refused = ClusterAuthorizationFailedError()
        return ElectLeadersResponse(error_code=refused.code, replica_election_results=[
            _TopicResult(topic=t.topic, partition_result=[_result(p, refused) for p in t.partitions])
            for t in request.topic_partitions or []])
    if ctx.broker.kafka_controller is not None:
        return _elect_in_cluster(ctx, request)
    if request.topic_partitions is None:
        # Every partition of every topic: none needs an election, and those are left out.
        return ElectLeadersResponse(error_code=ErrorCode.NONE, replica_election_results=[
            _TopicResult(topic=topic.name, partition_result=[]) for topic in ctx.broker.metadata.topics()])
    return ElectLeadersResponse(error_code=ErrorCode.NONE, replica_election_results=[
        _TopicResult(topic=t.topic, partition_result=[_result(p, _election_error(ctx, t.topic, p))
                                                      for p in t.partitions])
        for t in request.topic_partitions])


def _elect_in_cluster(ctx: RequestContext, request: ElectLeadersRequest) -> ElectLeadersResponse | None:
    """Hand the election to the controller; answer when it has written it (None: answered later)."""
    wanted = (None if request.topic_partitions is None
              else [TopicPartition(t.topic, p) for t in request.topic_partitions for p in t.partitions])
    controller = ctx.broker.kafka_controller

    def respond(answers: dict[TopicPartition, KafkaError | None] | KafkaError) -> None:
        if isinstance(answers, KafkaError):
            answers = {tp: answers for tp in wanted or []}
        by_topic: dict[str, list[_PartitionResult]] = {}
        for tp in wanted if wanted is not None else sorted(answers):
            error = answers[tp]
            result = (_result(tp.partition, error) if error is not None
                      else _PartitionResult(partition_id=tp.partition, error_code=ErrorCode.NONE))
            by_topic.setdefault(tp.topic, []).append(result)
        ctx.respond(ElectLeadersResponse(error_code=ErrorCode.NONE, replica_election_results=[
            _TopicResult(topic=topic, partition_result=results) for topic, results in by_topic.items()]))

    if not controller.is_active:
        respond(NotControllerError(f"Broker {ctx.broker.node_id} is not the controller"))
    else:
        controller.elect_leaders(wanted, request.election_type == UNCLEAN, respond)
    return None


def _election_error(ctx: RequestContext, topic_name: str, partition: int) -> KafkaError:
    topic = ctx.broker.metadata.topic(topic_name)
    if topic is None:
        return UnknownTopicOrPartitionError(f"No such topic as {topic_name}")
    if not 0 <= partition < topic.partitions:
        return UnknownTopicOrPartitionError(f"No such partition as {topic_name}-{partition}")
    return ElectionNotNeededError()


def _result(partition: int, error: KafkaError) -> _PartitionResult:
    return _PartitionResult(partition_id=partition, error_code=error.code, error_message=str(error))


serve(API_KEY, handle)
