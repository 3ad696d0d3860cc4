"""AlterPartition: API key 56, versions 0-3 (inter-broker: served, not advertised to clients).

Behaviour (Kafka's KafkaController.processAlterPartition, ZooKeeper mode):
- A partition leader asks the controller to change a partition's ISR (shrink a lagging follower, add one that
  caught up), naming the leader epoch and partition epoch its proposal is based on.
- NOT_CONTROLLER for the whole request on a broker that is not the active controller; STALE_BROKER_EPOCH when the
  leader's broker epoch is not its registration's (the czxid of /brokers/ids/N), as Kafka's controller checks.
- Per partition: UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID for an unknown id); FENCED_LEADER_EPOCH for a leader
  epoch older than the controller's; NOT_LEADER_OR_FOLLOWER when the sender does not lead it; the current state
  when it already is the one asked for (a retry); INVALID_UPDATE_VERSION for an older partition epoch or a write that
  lost a race; INELIGIBLE_REPLICA for an ISR member that is not live, shutting down or not assigned; else the ISR is
  written (compare-and-set on the state znode, fenced by the controller epoch) and the answer carries the new
  partition epoch. The controller then sends UpdateMetadata for the changed partitions to every live broker.
- The answer comes from the controller's event thread once the write is done.
- With an authorizer the sender needs CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
Version notes:
- v0-1 name topics, v2+ carry topic ids; v1+ leader_recovery_state (KIP-704); v3 ISR members with broker epochs
  (KIP-903; the epochs are not checked here).
"""

from __future__ import annotations

from collections import defaultdict

from wirebroker.apis.authorization import require
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation
from wirebroker.cluster.zk.data import LeaderAndIsr
from wirebroker.log.files import TopicPartition
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.alter_partition import (
    AlterPartitionRequest,
    AlterPartitionResponse,
)

API_KEY = 56
FIRST_TOPIC_ID_VERSION = 2
FIRST_BROKER_STATE_VERSION = 3

_Partition = AlterPartitionResponse.PartitionData


def handle(ctx: RequestContext, request: AlterPartitionRequest) -> AlterPartitionResponse | None:
    require(ctx, AclOperation.CLUSTER_ACTION)
    controller = ctx.broker.kafka_controller
    if controller is None or not controller.is_active:
        return AlterPartitionResponse(error_code=ErrorCode.NOT_CONTROLLER)
    version = ctx.api_version
    changes = []
    answers: dict[tuple[str | bytes, int], _Partition] = {}  # (topic as the request named it, partition) -> answer
    names: dict[str, str | bytes] = {}  # topic name -> as the request named it
    for topic in request.topics:
        key = topic.topic_id if version >= FIRST_TOPIC_ID_VERSION else topic.topic_name
        name = controller.topic_name(topic.topic_id) if version >= FIRST_TOPIC_ID_VERSION else topic.topic_name
        for partition in topic.partitions:
            if name is None:
                answers[(key, partition.partition_index)] = _Partition(partition_index=partition.partition_index,
                                                                      error_code=ErrorCode.UNKNOWN_TOPIC_ID)
                continue
            names[name] = key
            isr = (partition.new_isr if version < FIRST_BROKER_STATE_VERSION
                   else [member.broker_id for member in partition.new_isr_with_epochs])
            changes.append((TopicPartition(name, partition.partition_index), request.broker_id,
                            LeaderAndIsr(request.broker_id, partition.leader_epoch, tuple(isr),
                                         partition.leader_recovery_state, partition.partition_epoch)))

    def respond(results: dict[TopicPartition, LeaderAndIsr | KafkaError] | KafkaError) -> None:
        if isinstance(results, KafkaError):
            ctx.respond(AlterPartitionResponse(error_code=results.code))
            return
        for tp, result in results.items():
            answers[(names[tp.topic], tp.partition)] = _answer(tp.partition, result)
        ctx.respond(_response(version, answers))

    controller.alter_partition(request.broker_id, request.broker_epoch, changes, respond)
    return None


def _answer(index: int, result: LeaderAndIsr | KafkaError) -> _Partition:
    if isinstance(result, KafkaError):
        return _Partition(partition_index=index, error_code=result.code)
    return _Partition(partition_index=index, error_code=ErrorCode.NONE, leader_id=result.leader,
                      leader_epoch=result.leader_epoch, isr=list(result.isr),
                      leader_recovery_state=result.leader_recovery_state, partition_epoch=result.partition_epoch)


def _response(version: int, answers: dict[tuple[str | bytes, int], _Partition]) -> AlterPartitionResponse:
    topics: dict[str | bytes, list[_Partition]] = defaultdict(list)
    for (key, _), answer in answers.items():
        topics[key].append(answer)
    if version >= FIRST_TOPIC_ID_VERSION:
        data = [AlterPartitionResponse.TopicData(topic_id=key, partitions=parts) for key, parts in topics.items()]
    else:
        data = [AlterPartitionResponse.TopicData(topic_name=key, partitions=parts) for key, parts in topics.items()]
    return AlterPartitionResponse(error_code=ErrorCode.NONE, topics=data)


serve(API_KEY, handle, advertised=False)
