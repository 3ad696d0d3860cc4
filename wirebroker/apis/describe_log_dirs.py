"""DescribeLogDirs: API key 35, versions 1-5.

Behaviour (Kafka's KafkaApis.handleDescribeLogDirsRequest and ReplicaManager.describeLogDirs):
- One result per configured log dir, named by its absolute path, with the requested partitions whose logs it
  holds: their size in bytes (Kafka's log.size: every live segment, so a cleaning's swap shrinks it at once; the
  .cleaned files being written and the .deleted ones awaiting file.delete.delay.ms do not count), offset lag
  max(high watermark - log end offset, 0), and is_future_key false (this broker moves no replica between dirs).
  Topics with no requested partition in a dir are left out of it. A null topic list asks for every log, the
  internal topics' included.
- v4+ the total and usable bytes of the file system holding the dir. A dir whose file system cannot be read
  answers KAFKA_STORAGE_ERROR, as Kafka answers for an offline dir.
- The caller needs DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED and no results.
Version notes:
- v0 is not offered (Kafka 4, KIP-896); v2+ flexible; v3+ top-level error code; v4+ total and usable bytes
  (KIP-827); v5+ is_cordoned (KIP-1066), always false: this broker has no cordoned.log.dirs, so no dir is cordoned
  (Kafka's default).
"""

from __future__ import annotations

import logging
import os
from collections import defaultdict
from collections.abc import Iterable

from wirebroker.apis.authorization import require
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation
from wirebroker.log.files import TopicPartition
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.describe_log_dirs import (
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
)

log = logging.getLogger(__name__)

API_KEY = 35
MIN_VERSION = 1  # Kafka 4 (KIP-896)

_Result = DescribeLogDirsResponse.DescribeLogDirsResult
_Topic = DescribeLogDirsResponse.DescribeLogDirsTopic
_Partition = DescribeLogDirsResponse.DescribeLogDirsPartition


def handle(ctx: RequestContext, request: DescribeLogDirsRequest) -> DescribeLogDirsResponse:
    require(ctx, AclOperation.DESCRIBE)
    log_manager = ctx.broker.log_manager
    logs = log_manager.logs
    wanted = (set(logs) if request.topics is None
              else {TopicPartition(t.topic, p) for t in request.topics for p in t.partitions})
    results = []
    for log_dir in log_manager.log_dirs:
        try:
            total_bytes, usable_bytes = _space(log_dir)
        except OSError as exc:
            log.warning("DescribeLogDirs: log dir %s cannot be read (%s); answering KAFKA_STORAGE_ERROR", log_dir, exc)
            results.append(_Result(error_code=ErrorCode.KAFKA_STORAGE_ERROR, log_dir=log_dir))
            continue
        held = sorted(tp for tp, log_ in logs.items() if tp in wanted and os.path.dirname(log_.dir) == log_dir)
        results.append(_Result(error_code=ErrorCode.NONE, log_dir=log_dir, topics=_topics(held, logs),
                                total_bytes=total_bytes, usable_bytes=usable_bytes))
    return DescribeLogDirsResponse(error_code=ErrorCode.NONE, results=results)


def _topics(held: Iterable[TopicPartition], logs: dict) -> list[_Topic]:
    topics: dict[str, list[_Partition]] = defaultdict(list)
    for tp in held:
        log_ = logs[tp]
        topics[tp.topic].append(_Partition(partition_index=tp.partition, partition_size=log_.size,
                                           offset_lag=max(log_.high_watermark - log_.log_end_offset, 0),
                                           is_future_key=False))
    return [_Topic(name=name, partitions=partitions) for name, partitions in topics.items()]


def _space(log_dir: str) -> tuple[int, int]:
    """Total and usable bytes of the file system (Java's FileStore.getTotalSpace and getUsableSpace)."""
    stats = os.statvfs(log_dir)
    return stats.f_blocks * stats.f_frsize, stats.f_bavail * stats.f_frsize


serve(API_KEY, handle, min_version=MIN_VERSION)
