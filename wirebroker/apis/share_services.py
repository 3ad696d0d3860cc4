"""The share-group services of a broker (KIP-932), made at the first share request: a broker whose clients never
use share groups imports none of their modules and creates no `__share_group_state`.

- the share coordinator (coordinator/share_coordinator.py) over the internal topic `__share_group_state`;
- the share-partition manager (coordinator/share_partition_manager.py), on the group coordinator's timer;
- the group configs of share groups (`share.auto.offset.reset`, `share.record.lock.duration.ms`, ...), set with
  IncrementalAlterConfigs on GROUP resources (coordinator/share_group_configs.py);
- the group coordinator's initialisation of share-partition states (coordinator/share_state_initialization.py):
  InitializeShareGroupState through the persister on a thread of its own, never under the group coordinator's
  lock nor on a thread the persister's own RPCs may need, then reported back to the group coordinator.

In a cluster (KIP-932 across brokers, as Kafka runs it):
- the share-group coordinator is the group coordinator of the group id (its `__consumer_offsets` partition's leader);
- a share-partition lives on the leader of its topic partition, whose share-partition manager reads and writes its
  state through the persister RPCs to the share coordinator of the key (coordinator/share_persister_remote.py);
- the share coordinator follows the leadership of `__share_group_state` (its partitions led when the services are
  made, then every change), loading a partition it wins; a topic partition given up drops its share-partitions;
- the group configs live in ZooKeeper, for every broker (cluster/zk/group_configs.py);
- ShareFetch and ShareAcknowledge run on the share-partition threads and the persister RPCs on the share
  coordinator thread, never on a network thread: a persister write waits for the followers of its
  `__share_group_state` partition (acks=all), whose fetches the network threads answer (apis/group_requests.py), and
  the two pools apart keep a share-partition leader waiting on its own coordinator (over loopback) from waiting on
  itself.

They stop with the broker (its shutdown_listeners, once no request handler runs): the share threads take no new
task, the manager's timers and persister stop, the coordinator's loads stop, and the tasks under way finish.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wirebroker.apis.context import BrokerServices
from wirebroker.apis.group_requests import Handler, off_network_thread
from wirebroker.replica.manager import FetchRead, LeadershipListener, ReplicaManager
from wirebroker.replica.partition import READ_COMMITTED, READ_UNCOMMITTED, Partition

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from wirebroker.coordinator.group_coordinator import GroupCoordinator
    from wirebroker.coordinator.share_coordinator import ShareCoordinator
    from wirebroker.coordinator.share_group_configs import (
        ClusterShareGroupConfigs,
        ShareGroupConfigs,
    )
    from wirebroker.coordinator.share_partition_manager import (
        SharePartitionManager,
        StatePersister,
    )
    from wirebroker.coordinator.share_state_initialization import (
        InitializeShareState,
    )

log = logging.getLogger(__name__)

SHARE_PARTITION_THREADS = 2  # ShareFetch/ShareAcknowledge in a cluster: they serialise on the manager's lock anyway
STATE_REQUEST_THREADS = 1  # the persister RPCs in a cluster: Kafka's share.coordinator.threads default


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
    group_configs: ShareGroupConfigs | ClusterShareGroupConfigs
    partition_requests: Executor | None = None  # in a cluster: ShareFetch and ShareAcknowledge run here
    state_requests: Executor | None = None  # in a cluster: the persister RPCs and leadership changes run here
    state_initializations: Executor | None = None  # the group coordinator's InitializeShareGroupState calls


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

    in_cluster = broker.metadata_cache is not None
    coordinator = ShareCoordinator(ShareStateTopic(broker, broker.config), follow_leadership=in_cluster)
    zk_mode = getattr(broker, "zk_mode", None)
    if zk_mode is not None:
        from wirebroker.cluster.zk.group_configs import ZkGroupConfigStore
        from wirebroker.coordinator.share_group_configs import (
            ClusterShareGroupConfigs,
        )

        configs: ShareGroupConfigs | ClusterShareGroupConfigs = ClusterShareGroupConfigs(ZkGroupConfigStore(zk_mode.zk))
    else:
        configs = ShareGroupConfigs.open(broker.config.log_dirs[0])
    group_coordinator = broker.group_coordinator
    group_coordinator.use_share_group_configs(configs.get)
    persister: StatePersister = _remote_persister(broker) if in_cluster else coordinator
    partitions = SharePartitionManager(group_coordinator.config, _LogReads(broker.replica_manager), broker.metadata,
                                       group_coordinator.timer, persister, configs.get,
                                       broker.config["group.share.max.share.sessions"])
    channel = getattr(broker, "channel", None)  # the request channel (an embedded test broker may have none)
    if channel is not None:
        channel.connection_close_listeners.append(partitions.connection_closed)
    from concurrent.futures import ThreadPoolExecutor

    follow = None
    initializations = ThreadPoolExecutor(1, thread_name_prefix="share-state-initializer")
    if not in_cluster:
        services = ShareServices(coordinator, partitions, configs, state_initializations=initializations)
    else:
        services = ShareServices(
            coordinator, partitions, configs,
            ThreadPoolExecutor(SHARE_PARTITION_THREADS, thread_name_prefix="share-partition-requests"),
            ThreadPoolExecutor(STATE_REQUEST_THREADS, thread_name_prefix="share-coordinator-requests"),
            initializations)
        follow = _follow_leadership(broker, services)
    group_coordinator.use_share_state_initializer(_initializer(group_coordinator, persister, initializations))
    shutdown_listeners = getattr(broker, "shutdown_listeners", None)  # the broker's (an embedded test may have none)
    if shutdown_listeners is not None:
        shutdown_listeners.append(lambda: _shutdown(broker, services, follow))
    return services


def _shutdown(broker: BrokerServices, services: ShareServices, follow: LeadershipListener | None) -> None:
    """With the broker, once no request handler runs (Kafka's BrokerServer.shutdown: SharePartitionManager.close,
    then the share coordinator): no new task on the share threads, the manager's timers and its persister stopped,
    the coordinator's loads stopped, then the tasks still running finish and their threads end."""
    _made.pop(broker, None)
    if follow is not None:
        broker.replica_manager.leadership_listeners.remove(follow)
    channel = getattr(broker, "channel", None)
    if channel is not None and services.partitions.connection_closed in channel.connection_close_listeners:
        channel.connection_close_listeners.remove(services.partitions.connection_closed)
    executors = [e for e in (services.partition_requests, services.state_requests, services.state_initializations)
                 if e is not None]
    for executor in executors:
        executor.shutdown(wait=False, cancel_futures=True)
    services.partitions.close()
    if services.partitions.persister is not services.coordinator:
        services.coordinator.shutdown()
    for executor in executors:
        executor.shutdown(wait=True)


def _initializer(group_coordinator: GroupCoordinator, persister: StatePersister, executor: Executor
                 ) -> Callable[[InitializeShareState], None]:
    """Kafka's GroupCoordinatorService.persisterInitialize: each share-partition's state initialised through the
    persister, then the outcome reported to the group coordinator (the partitions initialised are recorded; those
    that failed stay initialising, tried again later)."""
    from wirebroker.protocol.errors import KafkaError

    def initialize(initialization: InitializeShareState) -> None:
        group_id = initialization.group_id
        done, failed, error = [], [], ""
        for (topic_id, index), start_offset in initialization.start_offsets.items():
            try:
                persister.initialize((group_id, topic_id, index), initialization.state_epoch, start_offset)
                done.append((topic_id, index))
            except KafkaError as exc:
                failed.append((topic_id, index))
                error = f"{type(exc).__name__}: {exc}"
            except Exception:
                log.exception("initialising share-partition %s:%s:%d failed", group_id, topic_id.hex(), index)
                failed.append((topic_id, index))
                error = "an unexpected error"
        if done:
            group_coordinator.share_state_initialized(group_id, done)
        if failed:
            group_coordinator.share_state_not_initialized(group_id, failed, error)

    def start(initialization: InitializeShareState) -> None:
        try:
            executor.submit(initialize, initialization)
        except RuntimeError:  # shut down: the broker is stopping, and the partitions stay initialising
            log.info("share group %s: no initialisation, the broker is shutting down", initialization.group_id)

    return start


def _remote_persister(broker: BrokerServices) -> StatePersister:
    from wirebroker.coordinator.share_persister_remote import (
        RemoteStatePersister,
    )

    listener = broker.config["inter.broker.listener.name"] or broker.config.listeners[0].name

    def own_endpoint() -> tuple[int, str, int] | None:
        endpoint = broker.metadata_cache.endpoint(broker.node_id, listener)
        return (broker.node_id, *endpoint) if endpoint is not None else None

    return RemoteStatePersister(own_endpoint, f"share-persister-{broker.node_id}", broker.config["request.timeout.ms"],
                                getattr(broker, "inter_broker_security", None))


def _follow_leadership(broker: BrokerServices, services: ShareServices) -> LeadershipListener:
    """The share coordinator follows `__share_group_state` leadership, and a topic partition given up drops its
    share-partitions (Kafka's SharePartitionListener.onBecomingFollower), in order, on the coordinator's thread (a
    LeaderAndIsr never waits for a lock of theirs)."""
    from wirebroker.coordinator.share_coordinator import SHARE_STATE_TOPIC

    coordinator, partitions = services.coordinator, services.partitions
    run, on_partitions = services.state_requests, services.partition_requests
    assert run is not None and on_partitions is not None

    def follow(leaders: list[Partition], not_leaders: list[Partition]) -> None:
        for partition in leaders:
            if partition.topic == SHARE_STATE_TOPIC:
                run.submit(coordinator.on_election, partition.index, partition.leader_epoch)
        for partition in not_leaders:
            if partition.topic == SHARE_STATE_TOPIC:
                run.submit(coordinator.on_resignation, partition.index, partition.leader_epoch)
            elif (topic := broker.metadata.topic(partition.topic)) is not None:
                # on a share-partition thread: the manager's lock may be held by one waiting for this coordinator
                on_partitions.submit(partitions.leadership_lost, topic.topic_id, partition.index)

    def led_already() -> None:  # what this broker led before its share services were made
        for index in range(coordinator.topic.num_partitions):
            partition = broker.replica_manager.partition(SHARE_STATE_TOPIC, index)
            if partition is not None and partition.is_leader:
                coordinator.on_election(index, partition.leader_epoch)

    broker.replica_manager.leadership_listeners.append(follow)
    run.submit(led_already)
    return follow


def on_share_partition_thread(handle: Handler) -> Handler:
    """ShareFetch and ShareAcknowledge: on the share-partition threads in a cluster, inline on a single broker."""
    return off_network_thread(handle, lambda ctx: share_services(ctx.broker).partition_requests)


def on_share_coordinator_thread(handle: Handler) -> Handler:
    """The persister RPCs: on the share coordinator's thread in a cluster, inline on a single broker."""
    return off_network_thread(handle, lambda ctx: share_services(ctx.broker).state_requests)
