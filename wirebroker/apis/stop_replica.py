"""StopReplica: API key 5, versions 0-4 (inter-broker: served, not advertised to clients).

Behaviour (Kafka's ReplicaManager.stopReplicas):
- Sent by the controller when a replica leaves a broker (reassignment, topic deletion, controlled shutdown): the
  broker stops fetching the partitions, and with delete_partition deletes their logs.
- A controller epoch older than the newest seen: STALE_CONTROLLER_EPOCH for the whole request. Per partition, a
  leader epoch older than ours is FENCED_LEADER_EPOCH; -2 (a topic deletion) and -1 (no epoch) always apply.
- With an authorizer the sender needs CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
Version notes:
- v0 lists partitions ungrouped, v1-2 grouped by topic, both with one delete_partitions flag; v3+ per-partition
  leader epoch and delete_partition (KIP-570); v2+ flexible; v4 is_k_raft_controller.
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.stop_replica import (
    StopReplicaRequest,
    StopReplicaResponse,
)
from wirebroker.replica.manager import StopReplica

API_KEY = 5
FIRST_GROUPED_VERSION = 1
FIRST_PARTITION_STATE_VERSION = 3


def handle(ctx: RequestContext, request: StopReplicaRequest) -> StopReplicaResponse:
    require(ctx, AclOperation.CLUSTER_ACTION)
    stops = _stops(ctx.api_version, request)
    try:
        errors = ctx.broker.replica_manager.stop_replicas(request.controller_id, request.controller_epoch, stops)
    except KafkaError as exc:
        return _response({(s.topic, s.index): exc.code for s in stops}, exc.code)
    return _response(errors, ErrorCode.NONE)


def _stops(version: int, request: StopReplicaRequest) -> list[StopReplica]:
    delete = request.delete_partitions
    if version < FIRST_GROUPED_VERSION:
        return [StopReplica(p.topic_name, p.partition_index, delete=delete) for p in request.ungrouped_partitions]
    if version < FIRST_PARTITION_STATE_VERSION:
        return [StopReplica(t.name, index, delete=delete) for t in request.topics for index in t.partition_indexes]
    return [StopReplica(t.topic_name, p.partition_index, p.leader_epoch, p.delete_partition)
            for t in request.topic_states for p in t.partition_states]


def _response(errors: dict[tuple[str, int], int], error_code: int) -> StopReplicaResponse:
    return StopReplicaResponse(error_code=error_code, partition_errors=[
        StopReplicaResponse.StopReplicaPartitionError(topic_name=topic, partition_index=index, error_code=code)
        for (topic, index), code in errors.items()
    ])


serve(API_KEY, handle, advertised=False)
