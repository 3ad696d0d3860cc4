"""LeaderAndIsr: API key 4, versions 0-7 (inter-broker: served, not advertised to clients).

Behaviour (Kafka's ReplicaManager.becomeLeaderOrFollower):
- Sent by the controller to the replicas of partitions whose leader or ISR it decided: for each partition the
  leader, leader epoch, ISR, partition epoch and assigned replicas. This broker leads the partitions naming it
  leader (a new leader epoch starts at its log end offset) and follows the others: fetcher threads truncate to the
  leader's epoch boundary (OffsetForLeaderEpoch), then fetch.
- A partition not hosted yet is created here, its log with it (the `is_new` path of a new topic or replica).
- A controller epoch older than the newest seen: STALE_CONTROLLER_EPOCH for the whole request. Per partition: a
  leader epoch not newer than ours is STALE_CONTROLLER_EPOCH (ignored), a topic id other than the log's is
  INCONSISTENT_TOPIC_ID, and a state whose replicas do not name this broker is UNKNOWN_TOPIC_OR_PARTITION.
- With an authorizer the sender (the controller) needs CLUSTER_ACTION on the cluster, else
  CLUSTER_AUTHORIZATION_FAILED: a cluster run with ACLs lists its brokers' principal in super.users, as Kafka's.
Version notes:
- v0-1 list partition states ungrouped, v2+ grouped by topic; v5+ carry topic ids and answer per topic id;
  v1+ is_new; v3+ adding/removing replicas (not acted on: no reassignment here); v4+ flexible; v5+ `type`
  (full/incremental, KIP-516; both applied the same way); v6+ leader_recovery_state (KIP-704); v7 is_k_raft_controller.
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.leader_and_isr import (
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
)
from wirebroker.protocol.primitives import UUID_ZERO
from wirebroker.replica.manager import PartitionDecision
from wirebroker.replica.partition import LeaderAndIsr

API_KEY = 4
FIRST_GROUPED_VERSION = 2
FIRST_TOPIC_ID_VERSION = 5


def handle(ctx: RequestContext, request: LeaderAndIsrRequest) -> LeaderAndIsrResponse:
    require(ctx, AclOperation.CLUSTER_ACTION)
    decisions = _decisions(ctx.api_version, request)
    try:
        errors = ctx.broker.replica_manager.become_leader_or_follower(
            request.controller_id, request.controller_epoch, decisions,
            {leader.broker_id: (leader.host_name, leader.port) for leader in request.live_leaders})
    except KafkaError as exc:
        errors = {(d.topic, d.index): exc.code for d in decisions}
        return _response(ctx.api_version, request, errors, exc.code)
    return _response(ctx.api_version, request, errors, ErrorCode.NONE)


def _decisions(version: int, request: LeaderAndIsrRequest) -> list[PartitionDecision]:
    if version < FIRST_GROUPED_VERSION:
        states = [(s.topic_name, UUID_ZERO, s) for s in request.ungrouped_partition_states]
    else:
        states = [(t.topic_name, t.topic_id, s) for t in request.topic_states for s in t.partition_states]
    return [PartitionDecision(topic, s.partition_index, topic_id,
                              LeaderAndIsr(s.leader, s.leader_epoch, tuple(s.isr), s.partition_epoch, tuple(s.replicas)),
                              s.is_new)
            for topic, topic_id, s in states]


def _response(version: int, request: LeaderAndIsrRequest, errors: dict[tuple[str, int], int],
              error_code: int) -> LeaderAndIsrResponse:
    _Error = LeaderAndIsrResponse.LeaderAndIsrPartitionError
    if version < FIRST_TOPIC_ID_VERSION:
        return LeaderAndIsrResponse(error_code=error_code, partition_errors=[
            _Error(topic_name=topic, partition_index=index, error_code=code) for (topic, index), code in errors.items()
        ])
    topic_ids = {t.topic_name: t.topic_id for t in request.topic_states}
    topics: dict[str, LeaderAndIsrResponse.LeaderAndIsrTopicError] = {}
    for (topic, index), code in errors.items():
        entry = topics.setdefault(topic, LeaderAndIsrResponse.LeaderAndIsrTopicError(topic_id=topic_ids[topic]))
        entry.partition_errors.append(_Error(partition_index=index, error_code=code))
    return LeaderAndIsrResponse(error_code=error_code, topics=list(topics.values()))


serve(API_KEY, handle, advertised=False)
