"""The broker's lifecycle (Kafka's BrokerServer): start every layer bottom-up, stop them top-down.

Start: log manager (loads and recovers the logs) -> metadata store and controller -> replica manager (hosts every
partition the metadata names) -> dispatcher, request channel, handler pool -> socket server (listeners last, so no
request arrives before the broker can answer it). Stop: listeners first, then handlers, purgatories, and the logs
(flush, checkpoints, clean-shutdown marker).
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from wirebroker.apis.emulation import api_table
from wirebroker.cluster.acls import AclStore
from wirebroker.cluster.client_quota_store import ClientQuotaStore
from wirebroker.cluster.client_quotas import CONNECTION_CREATION_RATE, IP, Quotas
from wirebroker.cluster.cluster_view import SingleNodeView
from wirebroker.cluster.controller import Change, Controller
from wirebroker.cluster.metadata import MetadataStore, TopicMetadata
from wirebroker.cluster.scram_credentials import ScramCredentialStore
from wirebroker.config import EMULATE_KEY, VIRTUAL_CLOCK_KEY, BrokerConfig, Listener
from wirebroker.coordinator.group import GroupConfig
from wirebroker.coordinator.group_coordinator import GroupCoordinator
from wirebroker.coordinator.offsets_topic import OFFSETS_TOPIC, OffsetsTopic
from wirebroker.coordinator.timer import SystemTimer
from wirebroker.log.clock import SYSTEM_CLOCK, VirtualClock
from wirebroker.log.manager import LogManager
from wirebroker.network.handler_pool import HandlerPool
from wirebroker.network.connection_quotas import parse_per_ip_overrides
from wirebroker.network.request_channel import RequestChannel
from wirebroker.network.socket_server import SocketServer
from wirebroker.replica.fetch_session import FetchSessionCache
from wirebroker.replica.manager import ReplicaManager
from wirebroker.replica.partition import Partition
from wirebroker.server.dispatch import Dispatcher
from wirebroker.server.transactions import build_transaction_coordinator

if TYPE_CHECKING:  # imported only by a cluster member (kazoo only in ZooKeeper mode): the single node starts faster
    from concurrent.futures import ThreadPoolExecutor

    from wirebroker.cluster.authorizer import Authorizer
    from wirebroker.cluster.zk.controller import KafkaController
    from wirebroker.network.client_security import ClientSecurity
    from wirebroker.server.web.server import HttpServer
    from wirebroker.server.zk_mode import ZkMode

log = logging.getLogger(__name__)


class Broker:
    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.node_id = config.node_id
        self._stopped = threading.Event()
        self.socket_server: SocketServer | None = None
        self.handler_pool: HandlerPool | None = None
        self.zk_mode: ZkMode | None = None  # with zookeeper.connect
        self.kafka_controller: KafkaController | None = None  # this broker's candidacy for controller, in ZooKeeper mode
        self.http_server: HttpServer | None = None  # with http.listener (server/web/)
        # services made on first use (share groups) stop here, once no request handler runs, before the coordinators
        self.shutdown_listeners: list[Callable[[], None]] = []

    # ---- lifecycle -----------------------------------------------------------------------------------------

    def start(self) -> None:
        config = self.config
        self.zk_mode = _connect_zookeeper(config)
        cluster_id = self.zk_mode.cluster_id if self.zk_mode is not None else config["cluster.id"]
        # One clock for every deadline a test may skip (log/clock.py); the log manager hands it on.
        self.clock = VirtualClock() if config[VIRTUAL_CLOCK_KEY] else SYSTEM_CLOCK
        self.log_manager = LogManager(config.log_dirs, config.log_config, config.node_id, cluster_id,
                                      broker_config=config, clock=self.clock)
        self.log_manager.startup()
        self.cluster_id = self.log_manager.cluster_id
        self.metadata = MetadataStore(config.log_dirs[0], self.cluster_id, self.node_id)
        self.controller = Controller(self.metadata, config["num.partitions"], config["default.replication.factor"])
        # A ZooKeeper cluster keeps its ACLs in ZooKeeper, for every broker (before the authorizer reads them).
        self.acls = AclStore(config.log_dirs[0]) if self.zk_mode is None else self.zk_mode.acl_store()
        self.scram_credentials = ScramCredentialStore(config.log_dirs[0])
        self.client_quotas = ClientQuotaStore(config.log_dirs[0])
        self.inter_broker_security = self._inter_broker_security()  # the transaction markers' TLS/SASL, if any
        self.authorizer = _build_authorizer(config, self.acls)
        self.replica_manager = ReplicaManager(self.log_manager, config.log_config, config.node_id,
                                              config["replica.lag.time.max.ms"])
        self._start_replication()
        if self.metadata_cache is None:
            self.controller.subscribe(self._apply_topic_change)
            for topic in self.metadata.topics():
                self.replica_manager.make_partitions(topic)
        if self.zk_mode is not None:
            self.zk_mode.install(self)
        group_config = GroupConfig.from_broker(config)
        self.offsets_topic = OffsetsTopic(self, group_config)
        self.group_coordinator = GroupCoordinator(group_config, self.offsets_topic, SystemTimer(clock=self.clock),
                                                  self.metadata)
        self.group_requests: ThreadPoolExecutor | None = None
        if self.metadata_cache is not None:  # in a cluster the coordinator follows __consumer_offsets leadership
            # Its requests (and leadership changes) run on a thread of their own: apis/group_requests.py says why.
            from concurrent.futures import ThreadPoolExecutor

            self.group_requests = ThreadPoolExecutor(max_workers=1, thread_name_prefix="group-coordinator-requests")
            self.replica_manager.leadership_listeners.append(self._move_group_coordinator)
        self.group_coordinator.start(own_every_partition=self.metadata_cache is None)
        self.transaction_coordinator, self.transaction_state_topic, self.transaction_partition_adds = (
            build_transaction_coordinator(self))
        self.fetch_sessions = FetchSessionCache(config["max.incremental.fetch.session.cache.slots"])
        self.channel = RequestChannel(max_queued=config["queued.max.requests"])
        self.dispatcher = Dispatcher(self, self.channel, api_table(config[EMULATE_KEY]))
        self.client_quotas.listeners.append(self._client_quotas_changed)
        self._client_quotas_changed(self.client_quotas.quotas())
        self.handler_pool = HandlerPool(self.channel, self.dispatcher, num_threads=config["num.io.threads"])
        self.socket_server = SocketServer(
            [(listener.name, listener.host, listener.port) for listener in config.listeners],
            self.channel,
            num_network_threads=config["num.network.threads"],
            socket_request_max_bytes=config["socket.request.max.bytes"],
            connections_max_idle_ms=config["connections.max.idle.ms"],
            socket_send_buffer_bytes=config["socket.send.buffer.bytes"],
            socket_receive_buffer_bytes=config["socket.receive.buffer.bytes"],
            max_connections=config["max.connections"],
            max_connections_per_ip=config["max.connections.per.ip"],
            max_connections_per_ip_overrides=parse_per_ip_overrides(config["max.connections.per.ip.overrides"]),
            max_connection_creation_rate=config["max.connection.creation.rate"],
            listener_security=self._listener_security(),
        )
        self.client_quotas.listeners.append(self._ip_quotas_changed)
        self._ip_quotas_changed(self.client_quotas.quotas())
        self.handler_pool.start()
        self.socket_server.start()
        self._bound_ports = self.socket_server.bound_ports()
        self.transaction_coordinator.start(own_every_partition=self.metadata_cache is None)  # markers need the ports
        if config["http.listener"]:  # the HTTP port's modules load only when it is configured
            from wirebroker.server.web import start_http_server

            self.http_server = start_http_server(self, config["http.listener"])
        if self.zk_mode is not None:
            self.kafka_controller = self.zk_mode.start(self)

    def _client_quotas_changed(self, quotas: Quotas) -> None:
        """Throttle by the client quotas once one is set (server/quota_managers.py loads only then)."""
        if self.dispatcher.quotas is None and not quotas:
            return
        from wirebroker.server.quota_managers import ClientQuotaManagers

        managers = self.dispatcher.quotas or ClientQuotaManagers()
        managers.update(quotas)
        self.dispatcher.quotas = managers if managers.enabled else None

    def _ip_quotas_changed(self, quotas: Quotas) -> None:
        """The connection_creation_rate of ip entities goes to the acceptors' connection quotas."""
        self.socket_server.connection_quotas.set_ip_connection_rates({
            dict(entity)[IP]: values[CONNECTION_CREATION_RATE] for entity, values in quotas.items()
            if entity[0][0] == IP and CONNECTION_CREATION_RATE in values})

    def _listener_security(self) -> dict | None:
        """TLS and SASL for the listeners that are not PLAINTEXT (none: nothing of it is imported)."""
        if set(self.config.security_protocols.values()) == {"PLAINTEXT"}:
            return None
        from wirebroker.server.security import listener_security

        return listener_security(self.config, self.scram_credentials)

    def _inter_broker_security(self) -> ClientSecurity | None:
        if set(self.config.security_protocols.values()) == {"PLAINTEXT"}:
            return None
        from wirebroker.server.security import inter_broker_security

        return inter_broker_security(self.config)

    def _start_replication(self) -> None:
        """The cluster view and, in a cluster, replication.

        A single broker (no zookeeper.connect) answers the metadata APIs from its own store as the only node. A
        cluster member (zookeeper.connect, or wirebroker.external.controller in tests) answers from the metadata
        cache the controller fills (UpdateMetadata), and replicates (server/cluster_member.py).
        """
        config = self.config
        if config["zookeeper.connect"] is None and not config["wirebroker.external.controller"]:
            self.metadata_cache = self.topic_purgatory = None
            self.cluster_view = SingleNodeView(self.metadata, self.node_id, self.advertised_endpoint,
                                               config["broker.rack"])
            return
        from wirebroker.server.cluster_member import start_replication  # a single node never loads replication

        zk_mode = self.zk_mode
        broker_epoch = (lambda: zk_mode.broker_epoch) if zk_mode is not None else (lambda: -1)
        member = start_replication(config, self.node_id, self.replica_manager, broker_epoch, self.inter_broker_security)
        self.metadata_cache = self.cluster_view = member.metadata_cache
        self.topic_purgatory = member.topic_purgatory

    def shutdown(self) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        log.info("shutting down broker %d", self.node_id)
        if self.zk_mode is not None:
            self.zk_mode.controlled_shutdown()
        if self.http_server is not None:
            self.http_server.shutdown()
        if self.socket_server is not None:
            self.socket_server.shutdown()
        if self.handler_pool is not None:
            self.handler_pool.shutdown()
        for stop in self.shutdown_listeners:
            stop()
        if getattr(self, "topic_purgatory", None) is not None:
            self.topic_purgatory.shutdown()
        if getattr(self, "group_requests", None) is not None:
            self.group_requests.shutdown(wait=False, cancel_futures=True)
        if hasattr(self, "group_coordinator"):
            self.group_coordinator.shutdown()
        if hasattr(self, "transaction_coordinator"):
            self.transaction_partition_adds.shutdown()
            self.transaction_coordinator.shutdown()
        if hasattr(self, "replica_manager"):
            self.replica_manager.shutdown()
        if self.zk_mode is not None:
            self.zk_mode.close()
        if hasattr(self, "log_manager"):
            self.log_manager.shutdown()
        log.info("broker %d shut down cleanly", self.node_id)

    # ---- what the APIs need --------------------------------------------------------------------------------

    def bound_listeners(self) -> list[Listener]:
        return [Listener(l.name, l.host, port) for l, port in zip(self.config.listeners, self._bound_ports)]

    def advertised_endpoint(self, listener_name: str) -> tuple[str, int]:
        """The host and port clients are told to use for `listener_name` (advertised.listeners, else listeners)."""
        for listener in self.config.advertised_listeners or []:
            if listener.name == listener_name:
                return listener.host or socket.getfqdn(), listener.port
        for listener in self.bound_listeners():
            if listener.name == listener_name:
                return listener.host or socket.getfqdn(), listener.port
        first = self.bound_listeners()[0]
        return first.host or socket.getfqdn(), first.port

    def auto_create_topic(self, name: str) -> TopicMetadata:
        """Create a topic a Metadata request asked for (auto.create.topics.enable), with the broker's defaults."""
        try:
            return self.controller.create_topic(name)
        except Exception:
            existing = self.metadata.topic(name)  # another request created it first
            if existing is not None:
                return existing
            raise

    def _move_group_coordinator(self, leaders: list[Partition], not_leaders: list[Partition]) -> None:
        """Kafka's onLeadershipChange: the group coordinator loads the __consumer_offsets partitions led here
        and unloads those given up, in order, on the group request thread (LeaderAndIsr never waits for the
        coordinator's lock)."""
        coordinator = self.group_coordinator
        for partition in leaders:
            if partition.topic == OFFSETS_TOPIC:
                self.group_requests.submit(coordinator.on_election, partition.index, partition.leader_epoch)
        for partition in not_leaders:
            if partition.topic == OFFSETS_TOPIC:
                self.group_requests.submit(coordinator.on_resignation, partition.index, partition.leader_epoch)

    def _apply_topic_change(self, change: Change, topic: TopicMetadata) -> None:
        if change in (Change.CREATED, Change.PARTITIONS_ADDED):
            self.replica_manager.make_partitions(topic)
        elif change is Change.DELETED:
            self.replica_manager.remove_topic(topic)
        elif change is Change.CONFIGS_CHANGED:
            self.replica_manager.update_topic_config(topic)


def _build_authorizer(config: BrokerConfig, acls: AclStore) -> Authorizer | None:
    """ACLs are enforced only when `authorizer.class.name` names an authorizer; only then is its module loaded."""
    class_name = config["authorizer.class.name"]
    if not class_name:
        return None
    from wirebroker.cluster.authorizer import Authorizer

    authorizer = Authorizer.from_config(class_name, config["super.users"], config["allow.everyone.if.no.acl.found"],
                                        acls)
    log.info("ACLs enforced (%s): %d bindings, super users %s, allow.everyone.if.no.acl.found=%s", class_name,
             len(acls.bindings()), sorted(authorizer.super_users), authorizer.allow_everyone_if_no_acl_found)
    return authorizer


def _connect_zookeeper(config: BrokerConfig) -> ZkMode | None:
    """ZooKeeper mode when `zookeeper.connect` is set; a single node never imports kazoo (start-up time)."""
    if config["zookeeper.connect"] is None:
        return None
    from wirebroker.server.zk_mode import ZkMode

    return ZkMode(config)
