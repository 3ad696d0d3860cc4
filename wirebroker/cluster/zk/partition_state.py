"""Partition state in ZooKeeper: /brokers/topics/<topic>/partitions/<p>/state, read and written as Kafka's
KafkaZkClient does (getTopicPartitionStates, createTopicPartitionStatesRaw, updateLeaderAndIsr).

The state znode holds `{"controller_epoch":..,"leader":..,"version":1,"leader_epoch":..,"isr":[..]}` (data.py);
its version is the partition epoch. Every write is a compare-and-set on that version inside a transaction fenced
by the controller epoch (fenced.py): a stale controller gets ControllerMovedError, and a write that lost a race
with another writer of the same partition (the leader's AlterPartition) comes back in `retry`, to be re-read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError
from kazoo.protocol.states import ZnodeStat

from wirebroker.cluster.zk import paths
from wirebroker.cluster.zk.data import (
    INITIAL_PARTITION_EPOCH,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    encode_isr_change_notification,
)
from wirebroker.cluster.zk.fenced import Write, commit_fenced
from wirebroker.log.files import TopicPartition


@dataclass
class UpdateLeaderAndIsrResult:
    """Kafka's UpdateLeaderAndIsrResult: what was written (with its new partition epoch), what failed, and what to
    re-read and compute again because its partition epoch moved."""
    finished: dict[TopicPartition, LeaderAndIsr] = field(default_factory=dict)
    failed: dict[TopicPartition, Exception] = field(default_factory=dict)
    retry: list[TopicPartition] = field(default_factory=list)


def get_partition_states(zk: KazooClient,
                         partitions: Iterable[TopicPartition]) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
    """The states that exist (a partition without one is left out), read in one pipelined round."""
    pending = {tp: zk.get_async(paths.partition_state(tp.topic, tp.partition)) for tp in partitions}
    states = {}
    for tp, async_result in pending.items():
        try:
            data, stat = async_result.get()
        except NoNodeError:
            continue
        states[tp] = LeaderIsrAndControllerEpoch.decode(data, stat.version)
    return states


def create_partition_states(zk: KazooClient, states: Mapping[TopicPartition, LeaderAndIsr], controller_epoch: int,
                            epoch_zk_version: int) -> UpdateLeaderAndIsrResult:
    """New partitions' first state: the parents /partitions and /partitions/<p> (kept if they exist), then the state
    znode, which must not exist yet (NodeExistsError in `failed`)."""
    topics = {tp.topic for tp in states}
    for level in ([paths.topic_partitions(t) for t in sorted(topics)],
                  [paths.topic_partition(tp.topic, tp.partition) for tp in states]):
        results = commit_fenced(zk, epoch_zk_version, {path: _create(path, b"") for path in level})
        for result in results.values():
            if isinstance(result, Exception) and not isinstance(result, NodeExistsError):
                raise result
    writes = {tp: _create(paths.partition_state(tp.topic, tp.partition),
                          LeaderIsrAndControllerEpoch(state, controller_epoch).encode())
              for tp, state in states.items()}
    outcome = UpdateLeaderAndIsrResult()
    for tp, result in commit_fenced(zk, epoch_zk_version, writes).items():
        if isinstance(result, Exception):
            outcome.failed[tp] = result
        else:
            outcome.finished[tp] = states[tp].with_partition_epoch(INITIAL_PARTITION_EPOCH)
    return outcome


def update_leader_and_isr(zk: KazooClient, states: Mapping[TopicPartition, LeaderAndIsr], controller_epoch: int,
                          epoch_zk_version: int) -> UpdateLeaderAndIsrResult:
    """Write each state on condition that its znode is still at `partition_epoch`; ControllerMovedError when this
    controller's epoch is stale."""
    writes = {tp: _set(paths.partition_state(tp.topic, tp.partition),
                       LeaderIsrAndControllerEpoch(state, controller_epoch).encode(), state.partition_epoch)
              for tp, state in states.items()}
    outcome = UpdateLeaderAndIsrResult()
    for tp, result in commit_fenced(zk, epoch_zk_version, writes).items():
        if isinstance(result, ZnodeStat):
            outcome.finished[tp] = states[tp].with_partition_epoch(result.version)
        elif isinstance(result, BadVersionError):
            outcome.retry.append(tp)
        else:
            outcome.failed[tp] = result
    return outcome


def create_isr_change_notification(zk: KazooClient, partitions: Iterable[TopicPartition]) -> str:
    """A leader's note that it changed these partitions' ISR (pre-AlterPartition brokers); returns the znode path."""
    return zk.create(f"{paths.ISR_CHANGE_NOTIFICATION}/{paths.ISR_CHANGE_PREFIX}",
                     encode_isr_change_notification(sorted(partitions)), sequence=True, makepath=True)


def _create(path: str, data: bytes) -> Write:
    return lambda transaction: transaction.create(path, data)


def _set(path: str, data: bytes, version: int) -> Write:
    return lambda transaction: transaction.set_data(path, data, version)
