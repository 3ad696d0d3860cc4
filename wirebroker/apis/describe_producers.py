"""DescribeProducers: API key 61, version 0 (KIP-664); `kafka-transactions.sh describe-producers` asks the leader of a
partition which idempotent and transactional producers it knows.

Behaviour (Kafka's ReplicaManager.activeProducerState and UnifiedLog.activeProducers):
- Per partition, from the leader's producer state: each producer id with its epoch, last sequence, last timestamp,
  the coordinator epoch of its last marker, and the first offset of its open transaction (-1 when none), the offset
  an operator gives `kafka-transactions.sh abort --start-offset` to abort a hanging transaction.
- UNKNOWN_TOPIC_OR_PARTITION for a partition that does not exist; NOT_LEADER_OR_FOLLOWER when this broker does not
  lead it (the admin client asks the leader again).
- With an authorizer each topic needs READ, else TOPIC_AUTHORIZATION_FAILED for its partitions.
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.describe_producers import (
    DescribeProducersRequest,
    DescribeProducersResponse,
)

API_KEY = 61
NO_TXN_START_OFFSET = -1

_R = DescribeProducersResponse


def handle(ctx: RequestContext, request: DescribeProducersRequest) -> DescribeProducersResponse:
    return _R(topics=[_R.TopicResponse(name=topic.name, partitions=[_partition(ctx, topic.name, index)
                                                                    for index in topic.partition_indexes])
                      for topic in request.topics])


def _partition(ctx: RequestContext, topic: str, index: int) -> DescribeProducersResponse.PartitionResponse:
    try:
        require(ctx, AclOperation.READ, ResourceType.TOPIC, topic)  # before its existence is looked at
        partition = ctx.broker.replica_manager.leader_partition(topic, index)
    except KafkaError as exc:
        return _R.PartitionResponse(partition_index=index, error_code=exc.code, error_message=str(exc))
    producers = partition.log.active_producers()
    return _R.PartitionResponse(partition_index=index, error_code=ErrorCode.NONE, active_producers=[
        _R.ProducerState(producer_id=producer_id, producer_epoch=entry.producer_epoch, last_sequence=entry.last_seq,
                         last_timestamp=entry.last_timestamp, coordinator_epoch=entry.coordinator_epoch,
                         current_txn_start_offset=NO_TXN_START_OFFSET if entry.current_txn_first_offset is None
                         else entry.current_txn_first_offset)
        for producer_id, entry in sorted(producers.items())])


serve(API_KEY, handle)
