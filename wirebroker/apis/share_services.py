"""The share-group services of a broker (KIP-932), made at the first share request: a broker whose clients never
use share groups imports none of their modules and creates no `__share_group_state`.

- the share coordinator (coordinator/share_coordinator.py) over the internal topic `__share_group_state`;
- the share-partition manager (coordinator/share_partition_manager.py), on the group coordinator's timer;
- the group configs of share groups (`share.auto.offset.reset`, `share.record.lock.duration.ms`, ...), set with
  IncrementalAlterConfigs on GROUP resources (coordinator/share_group_configs.py).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wirebroker.apis.context import BrokerServices
from wirebroker.replica.manager import FetchRead, ReplicaManager
from wirebroker.replica.partition import READ_COMMITTED, READ_UNCOMMITTED, Partition

if TYPE_CHECKING:
    from wirebroker.coordinator.share_coordinator import ShareCoordinator
    from wirebroker.coordinator.share_group_configs import ShareGroupConfigs
    from wirebroker.coordinator.share_partition_manager import SharePartitionManager


class _LogReads:
    """The replica manager as the share-partition manager reads it (coordinator modules never import replica)."""

    def __init__(self, replica_manager: ReplicaManager) -> None:
        self._replica_manager = replica_manager

    def leader_partition(self, topic: str, index: int) -> Partition:
        return self._replica_manager.leader_partition(topic, index)

    def fetch(self, reads: list[tuple[Partition, int]], max_bytes: int, min_bytes: int, max_wait_ms: int,
              read_committed: bool, respond: Callable[[list[FetchRead]], None]) -> None:
        fetch_reads = [FetchRead(partition.topic, partition.index, offset, max_bytes, partition=partition)
                       for partition, offset in reads]
        self._replica_manager.fetch_messages(fetch_reads, max_bytes, min_bytes, max_wait_ms,
                                             READ_COMMITTED if read_committed else READ_UNCOMMITTED, respond)


@dataclass(frozen=True)
class ShareServices:
    coordinator: ShareCoordinator
    partitions: SharePartitionManager
    group_configs: ShareGroupConfigs


_made: weakref.WeakKeyDictionary[BrokerServices, ShareServices] = weakref.WeakKeyDictionary()
_making = threading.Lock()


def share_services(broker: BrokerServices) -> ShareServices:
    services = _made.get(broker)
    if services is not None:
        return services
    with _making:
        services = _made.get(broker)
        if services is None:
            services = _made[broker] = _make(broker)
        return services


def _make(broker: BrokerServices) -> ShareServices:
    from wirebroker.coordinator.share_coordinator import (
        ShareCoordinator,
        ShareStateTopic,
    )
    from wirebroker.coordinator.share_group_configs import ShareGroupConfigs
    from wirebroker.coordinator.share_partition_manager import SharePartitionManager

    coordinator = ShareCoordinator(ShareStateTopic(broker, broker.config))
    configs = ShareGroupConfigs.open(broker.config.log_dirs[0])
    group_coordinator = broker.group_coordinator
    group_coordinator.use_share_group_configs(configs.get)
    partitions = SharePartitionManager(group_coordinator.config, _LogReads(broker.replica_manager), broker.metadata,
                                       group_coordinator.timer, coordinator, configs.get)
    channel = getattr(broker, "channel", None)  # the request channel (an embedded test broker may have none)
    if channel is not None:
        channel.connection_close_listeners.append(partitions.connection_closed)
    return ShareServices(coordinator, partitions, configs)
