"""UpdateMetadata: API key 6, versions 0-8 (inter-broker: served, not advertised to clients).

Behaviour (Kafka's ReplicaManager.maybeUpdateMetadataCache):
- Sent by the controller to every broker: the live brokers (endpoints per listener, rack) and partition states
  (leader, leader epoch, ISR, partition epoch as zk_version, replicas, offline replicas). The broker's metadata
  cache takes them (cluster/metadata_cache.py) and Metadata, DescribeCluster and DescribeTopicPartitions answer
  from it; a leader of -2 deletes the partition from the cache. Then the topic changes waiting in the topic
  purgatory (apis/delayed_topic_change.py) for the topics the request names are checked: a CreateTopics,
  CreatePartitions or DeleteTopics this broker took is answered once its cache shows the change.
- A controller epoch older than the newest seen: STALE_CONTROLLER_EPOCH, and nothing changes.
- A broker with no metadata cache (a single broker, no cluster) answers the request without acting on it.
- With an authorizer the sender needs CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
Version notes:
- v0 names one PLAINTEXT endpoint per broker; v1+ a list of endpoints, v3+ with listener names (before: the
  security protocol's name); v2+ rack; v4+ offline replicas; v5+ partition states grouped by topic; v6+ flexible;
  v7+ topic ids; v8 is_k_raft_controller and `type`.
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation
from wirebroker.cluster.metadata_cache import LiveBroker, PartitionMetadata
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.update_metadata import (
    UpdateMetadataRequest,
    UpdateMetadataResponse,
)
from wirebroker.protocol.primitives import UUID_ZERO

API_KEY = 6
FIRST_ENDPOINTS_VERSION = 1
FIRST_LISTENER_NAME_VERSION = 3
FIRST_GROUPED_VERSION = 5
SECURITY_PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}


def handle(ctx: RequestContext, request: UpdateMetadataRequest) -> UpdateMetadataResponse:
    require(ctx, AclOperation.CLUSTER_ACTION)
    cache = ctx.broker.metadata_cache
    try:
        ctx.broker.replica_manager.check_controller_epoch(request.controller_id, request.controller_epoch,
                                                          "UpdateMetadata")
    except KafkaError as exc:
        return UpdateMetadataResponse(error_code=exc.code)
    if cache is not None:
        partitions = _partitions(ctx.api_version, request)
        cache.update(request.controller_id, _brokers(ctx.api_version, request), partitions)
        purgatory = ctx.broker.topic_purgatory
        for topic in {state.topic for state in partitions}:
            purgatory.check_and_complete(topic)
    return UpdateMetadataResponse(error_code=ErrorCode.NONE)


def _brokers(version: int, request: UpdateMetadataRequest) -> list[LiveBroker]:
    brokers = []
    for broker in request.live_brokers:
        if version < FIRST_ENDPOINTS_VERSION:
            endpoints = {"PLAINTEXT": (broker.v0_host, broker.v0_port)}
        else:
            endpoints = {
                (e.listener if version >= FIRST_LISTENER_NAME_VERSION
                 else SECURITY_PROTOCOLS.get(e.security_protocol, str(e.security_protocol))): (e.host, e.port)
                for e in broker.endpoints
            }
        brokers.append(LiveBroker(broker.id, endpoints, broker.rack or None))
    return brokers


def _partitions(version: int, request: UpdateMetadataRequest) -> list[PartitionMetadata]:
    if version < FIRST_GROUPED_VERSION:
        states = [(s.topic_name, UUID_ZERO, s) for s in request.ungrouped_partition_states]
    else:
        states = [(t.topic_name, t.topic_id, s) for t in request.topic_states for s in t.partition_states]
    return [PartitionMetadata(topic, topic_id, s.partition_index, s.leader, s.leader_epoch, tuple(s.isr),
                              s.zk_version, tuple(s.replicas), tuple(s.offline_replicas))
            for topic, topic_id, s in states]


serve(API_KEY, handle, advertised=False)
