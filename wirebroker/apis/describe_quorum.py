"""DescribeQuorum: API key 55, versions 0-2.

This broker is a single-node KRaft quorum of its own: the only voter, and the leader of `__cluster_metadata`
partition 0. It keeps that metadata in one JSON file, not in a log (cluster/metadata.py), so the quorum's log is
reported empty: high watermark and log end offset 0, in leader epoch 0 (the one node never loses an election).

Behaviour (Kafka's KafkaRaftClient.handleDescribeQuorumRequest and RaftUtil.singletonDescribeQuorumResponse):
- A request naming anything but exactly `__cluster_metadata` partition 0: UNKNOWN_TOPIC_OR_PARTITION on every
  partition it names (DescribeQuorumRequest.getPartitionLevelErrorResponse).
- Otherwise the leader's answer: this node leads; it is the one voter, fetched and caught up now (Kafka stamps
  the leader with the current time); no observers.
- The caller needs DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED with Kafka's default message.
Version notes:
- v0 flexible from the start; v1+ last fetch and last caught-up timestamps (KIP-836); v2+ error messages, the
  voter's directory id and its listeners (KIP-853): this node's listeners at their advertised addresses.
"""

from __future__ import annotations

import time

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation
from wirebroker.log.metadata_files import read_meta_properties
from wirebroker.protocol.errors import (
    ClusterAuthorizationFailedError,
    ErrorCode,
    UnknownTopicOrPartitionError,
)
from wirebroker.protocol.messages.describe_quorum import (
    DescribeQuorumRequest,
    DescribeQuorumResponse,
)
from wirebroker.protocol.primitives import UUID_ZERO

API_KEY = 55

METADATA_TOPIC = "__cluster_metadata"
METADATA_PARTITION = 0
LEADER_EPOCH = 0
METADATA_LOG_END_OFFSET = 0  # no metadata log: see the module docstring
FIRST_NODES_VERSION = 2  # KIP-853: the voters' directory ids and listeners

_Topic = DescribeQuorumResponse.TopicData
_Partition = DescribeQuorumResponse.PartitionData


def handle(ctx: RequestContext, request: DescribeQuorumRequest) -> DescribeQuorumResponse:
    if not ctx.authorize(AclOperation.DESCRIBE):
        refused = ClusterAuthorizationFailedError()  # Kafka's raft client answers with the default message
        return DescribeQuorumResponse(error_code=refused.code, error_message=str(refused), topics=[], nodes=[])
    if not _names_the_metadata_partition(request):
        unknown = UnknownTopicOrPartitionError()
        return DescribeQuorumResponse(error_code=ErrorCode.NONE, topics=[
            _Topic(topic_name=t.topic_name, partitions=[
                _Partition(partition_index=p.partition_index, error_code=unknown.code, error_message=str(unknown))
                for p in t.partitions])
            for t in request.topics])
    partition = _Partition(partition_index=METADATA_PARTITION, error_code=ErrorCode.NONE,
                           leader_id=ctx.broker.node_id, leader_epoch=LEADER_EPOCH,
                           high_watermark=METADATA_LOG_END_OFFSET, current_voters=[_voter(ctx)], observers=[])
    response = DescribeQuorumResponse(error_code=ErrorCode.NONE, topics=[_Topic(topic_name=METADATA_TOPIC, partitions=[partition])])
    if ctx.api_version >= FIRST_NODES_VERSION:
        response.nodes = [_node(ctx)]
    return response


def _names_the_metadata_partition(request: DescribeQuorumRequest) -> bool:
    """Kafka's RaftUtil.hasValidTopicPartition: one topic, the metadata topic, with one partition, partition 0."""
    return (len(request.topics) == 1 and request.topics[0].topic_name == METADATA_TOPIC
            and [p.partition_index for p in request.topics[0].partitions] == [METADATA_PARTITION])


def _voter(ctx: RequestContext) -> DescribeQuorumResponse.ReplicaState:
    now_ms = int(time.time() * 1000)
    voter = DescribeQuorumResponse.ReplicaState(replica_id=ctx.broker.node_id, log_end_offset=METADATA_LOG_END_OFFSET,
                                                last_fetch_timestamp=now_ms, last_caught_up_timestamp=now_ms)
    if ctx.api_version >= FIRST_NODES_VERSION:
        meta = read_meta_properties(str(ctx.broker.config.log_dirs[0]))  # the dir that holds the cluster metadata
        voter.replica_directory_id = meta.directory_id.bytes if meta is not None else UUID_ZERO
    return voter


def _node(ctx: RequestContext) -> DescribeQuorumResponse.Node:
    broker = ctx.broker
    listeners = []
    for listener in broker.bound_listeners():
        host, port = broker.advertised_endpoint(listener.name)
        listeners.append(DescribeQuorumResponse.Listener(name=listener.name, host=host, port=port))
    return DescribeQuorumResponse.Node(node_id=broker.node_id, listeners=listeners)


serve(API_KEY, handle)
