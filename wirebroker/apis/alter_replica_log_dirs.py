"""AlterReplicaLogDirs: API key 34, versions 1-2.

Behaviour (Kafka's KafkaApis.handleAlterReplicaLogDirsRequest and ReplicaManager.alterReplicaLogDirs), per named
partition (a partition named under two dirs takes the later one, as Kafka's map of them does):
- INVALID_TOPIC_EXCEPTION when the topic name is too long for the "-future" directory a move would need (KAFKA-4893);
- LOG_DIR_NOT_FOUND when the path is not one of this broker's log dirs, named as DescribeLogDirs names them
  (absolute);
- UNKNOWN_TOPIC_OR_PARTITION when the partition does not exist;
- NONE when its log already lives in that dir: nothing to move.
- Moving a log to another dir (Kafka copies it into a "-future" log while it stays online, KIP-113) is not done by
  this broker: KAFKA_STORAGE_ERROR, with a log line saying so.
Answers are grouped by topic in request order. The caller needs ALTER on the cluster, else every partition is
CLUSTER_AUTHORIZATION_FAILED.
Version notes:
- v0 is not offered (Kafka 4, KIP-896); v2+ flexible.
"""

from __future__ import annotations

import logging
import os

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation
from wirebroker.protocol.errors import (
    ClusterAuthorizationFailedError,
    ErrorCode,
    InvalidTopicError,
    KafkaError,
    KafkaStorageError,
    LogDirNotFoundError,
    UnknownTopicOrPartitionError,
)
from wirebroker.protocol.messages.alter_replica_log_dirs import (
    AlterReplicaLogDirsRequest,
    AlterReplicaLogDirsResponse,
)

log = logging.getLogger(__name__)

API_KEY = 34
MIN_VERSION = 1  # Kafka 4 (KIP-896)

MAX_DIR_NAME_LENGTH = 255  # a file name's limit on common file systems
# "<topic>-<partition>.<32 hex digits>-future": Kafka's UnifiedLog.logFutureDirName around the topic and partition.
FUTURE_DIR_NAME_EXTRA = len("-") + len(".") + 32 + len("-future")

_TopicResult = AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult
_PartitionResult = AlterReplicaLogDirsResponse.AlterReplicaLogDirPartitionResult


def handle(ctx: RequestContext, request: AlterReplicaLogDirsRequest) -> AlterReplicaLogDirsResponse:
    destinations: dict[tuple[str, int], str] = {}
    for log_dir in request.dirs:
        for topic in log_dir.topics:
            for partition in topic.partitions:
                destinations[(topic.name, partition)] = log_dir.path
    results: dict[str, _TopicResult] = {}
    allowed = ctx.authorize(AclOperation.ALTER)
    for (topic, partition), destination in destinations.items():
        try:
            if not allowed:  # Kafka answers every partition so (AlterReplicaLogDirsRequest.getErrorResponse)
                raise ClusterAuthorizationFailedError()
            _check_move(ctx, topic, partition, destination)
            code = ErrorCode.NONE
        except KafkaError as exc:
            log.info("AlterReplicaLogDirs of %s-%d to %s from %s: %s", topic, partition, destination,
                     ctx.client, exc)
            code = exc.code
        results.setdefault(topic, _TopicResult(topic_name=topic)).partitions.append(
            _PartitionResult(partition_index=partition, error_code=code))
    return AlterReplicaLogDirsResponse(results=list(results.values()))


def _check_move(ctx: RequestContext, topic: str, partition: int, destination: str) -> None:
    if len(topic) + len(str(partition)) + FUTURE_DIR_NAME_EXTRA > MAX_DIR_NAME_LENGTH:
        raise InvalidTopicError("The topic name is too long.")
    log_manager = ctx.broker.log_manager
    if destination not in log_manager.log_dirs:
        raise LogDirNotFoundError(f"Log dir {destination} is not found in the config.")
    log_ = log_manager.get_log(topic, partition)
    if log_ is None:
        raise UnknownTopicOrPartitionError(f"Error while fetching partition state for {topic}-{partition}")
    if os.path.dirname(log_.dir) != destination:
        log.warning("Not moving %s-%d from %s to %s: this broker does not move replicas between log dirs",
                    topic, partition, os.path.dirname(log_.dir), destination)
        raise KafkaStorageError(f"Moving replicas between log directories is not supported: {topic}-{partition}")


serve(API_KEY, handle, min_version=MIN_VERSION)
