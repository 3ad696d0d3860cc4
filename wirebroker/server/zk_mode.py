"""A broker's ZooKeeper mode (Kafka's KafkaServer of the ZooKeeper era), used when `zookeeper.connect` is set.

Start-up, in Kafka's order:
1. `ZkMode(config)`: connect (kazoo, session of zookeeper.session.timeout.ms; a chroot in zookeeper.connect is
   created if missing), create the persistent paths, and get the cluster id from /cluster/id (the first broker
   writes its own); the log directories are then formatted with it, or refused when meta.properties names another
   cluster.
2. `install(broker)`: topic administration goes through ZooKeeper (ZkAdmin replaces the single-node Controller,
   so the API handlers do not branch); the broker's topics are the metadata cache's with their /config/topics
   overrides, and producer ids come in blocks from ZooKeeper; new logs take their topic's overrides; config
   changes of other brokers arrive through /config/changes.
3. `start(broker)`, once the listeners are open: register /brokers/ids/<id> with the advertised endpoints and rack
   (the broker epoch is the znode's czxid; a previous run's znode is waited out until its session expires) and
   stand for controller (KafkaController).

Shutdown: `controlled_shutdown()` first (with controlled.shutdown.enable, ControlledShutdown to the controller
until it answers with no partition left, at most controlled.shutdown.max.retries times, backing off
controlled.shutdown.retry.backoff.ms), then, once the broker has stopped serving, `close()`: resign as controller,
stop re-registering and close the session, which removes /brokers/ids/<id>.

kazoo is imported here only, and this module only when `zookeeper.connect` is set: a single node never loads it.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.handlers.threading import KazooTimeoutError

from wirebroker.cluster.controller import Change
from wirebroker.cluster.metadata import TopicMetadata
from wirebroker.cluster.zk.acls import ZkAclStore
from wirebroker.cluster.zk.admin import ConfigChangeListener, ZkAdmin
from wirebroker.cluster.zk.brokers import (
    BrokerIdInUseError,
    BrokerRegistration,
    ensure_persistent_paths,
    get_broker,
    get_or_create_cluster_id,
)
from wirebroker.cluster.zk.client_quotas import ZkClientQuotaStore
from wirebroker.cluster.zk.controller import ControllerSettings, KafkaController
from wirebroker.cluster.zk.controller_election import get_controller_id
from wirebroker.cluster.zk.controller_requests import endpoint_for
from wirebroker.cluster.zk.data import BrokerInfo, EndPoint
from wirebroker.cluster.zk.scram_credentials import ZkScramCredentialStore
from wirebroker.cluster.zk.topic_metadata import ZkTopicMetadata
from wirebroker.cluster.zk.topics import get_topic_config
from wirebroker.config import BrokerConfig, new_cluster_id
from wirebroker.network.broker_client import BrokerClient, BrokerUnreachable
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.controlled_shutdown import ControlledShutdownRequest

log = logging.getLogger(__name__)

CONTROLLED_SHUTDOWN_VERSION = 3
CONTROLLED_SHUTDOWN_TIMEOUT_S = 30.0  # Kafka's request.timeout.ms for the request to the controller
REGISTRATION_RETRY_S = 0.5
REGISTRATION_MARGIN_S = 5.0  # past the session timeout: ZooKeeper expires sessions on its own tick


def _connect(config: BrokerConfig, connect: str) -> KazooClient:
    """A started session (zookeeper.session.timeout.ms) that reconnects for as long as it lives; ConnectionError,
    which the command line reports as a failure to start, when no server answers within the connection timeout."""
    connection_timeout_ms = config["zookeeper.connection.timeout.ms"] or config["zookeeper.session.timeout.ms"]
    client = KazooClient(hosts=connect, timeout=config["zookeeper.session.timeout.ms"] / 1000,
                         connection_retry={"max_tries": -1, "max_delay": 1.0})
    log.info("Connecting to zookeeper on %s", connect)
    try:
        client.start(timeout=connection_timeout_ms / 1000)
    except KazooTimeoutError:
        client.close()
        raise ConnectionError(f"could not connect to ZooKeeper at {connect} within {connection_timeout_ms} ms "
                              f"(zookeeper.connection.timeout.ms); is it running?") from None
    return client


class ZkMode:
    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.node_id = config.node_id
        self.listener_name = config["inter.broker.listener.name"] or config.listeners[0].name
        connect = config["zookeeper.connect"]
        hosts, _, chroot = connect.partition("/")
        if chroot.strip("/"):  # Kafka creates the chroot of `host:2181/kafka` if it is missing
            root = _connect(config, hosts)
            try:
                root.ensure_path(f"/{chroot}")
            finally:
                root.stop()
                root.close()
        self.zk = _connect(config, connect)
        ensure_persistent_paths(self.zk)
        self.cluster_id = get_or_create_cluster_id(self.zk, config["cluster.id"] or new_cluster_id())
        log.info("Cluster ID = %s", self.cluster_id)
        self.registration: BrokerRegistration | None = None
        self.controller: KafkaController | None = None
        self.config_changes: ConfigChangeListener | None = None
        self._inter_broker_security: Any = None  # the broker's, once started: controlled shutdown uses it

    def acl_store(self) -> ZkAclStore:
        """The cluster's ACL bindings, in ZooKeeper as Kafka's AclAuthorizer keeps them (before the authorizer)."""
        return ZkAclStore(self.zk)

    def install(self, broker: Any) -> None:
        """ZooKeeper-backed topic administration and topic metadata for `broker`, before its coordinators start."""
        admin = ZkAdmin(self.zk, self.config["num.partitions"], self.config["default.replication.factor"])
        metadata = ZkTopicMetadata(self.zk, broker.metadata_cache, self.node_id)

        def apply(change: Change, topic: TopicMetadata) -> None:
            if change is Change.CONFIGS_CHANGED:
                metadata.configs_changed(topic)
                broker.replica_manager.update_topic_config(topic)

        admin.subscribe(apply)
        broker.controller = admin
        broker.metadata = metadata
        broker.replica_manager.topic_configs = lambda topic: get_topic_config(self.zk, topic)
        broker.scram_credentials = ZkScramCredentialStore(self.zk)  # /config/users, as Kafka keeps them
        broker.client_quotas = ZkClientQuotaStore(self.zk)  # /config/users, /config/clients, /config/ips
        self.config_changes = ConfigChangeListener(self.zk, admin)
        self.config_changes.start()

    def start(self, broker: Any) -> KafkaController:
        """Register this broker and stand for controller; returns the (possibly inactive) controller."""
        protocols = dict(item.split(":", 1) for item in self.config["listener.security.protocol.map"])
        endpoints = []
        for listener in broker.bound_listeners():
            host, port = broker.advertised_endpoint(listener.name)
            endpoints.append(EndPoint(listener.name, host, port, protocols.get(listener.name, listener.name)))
        self.registration = BrokerRegistration(self.zk, BrokerInfo(self.node_id, tuple(endpoints),
                                                                   self.config["broker.rack"]))
        self._register()
        self.controller = KafkaController(self.zk, self.node_id, ControllerSettings(
            self.listener_name, self.config.log_config.unclean_leader_election_enable,
            self.config["auto.leader.rebalance.enable"], self.config["leader.imbalance.check.interval.seconds"],
            self.config["leader.imbalance.per.broker.percentage"], broker.inter_broker_security))
        self._inter_broker_security = broker.inter_broker_security
        self.controller.start()
        return self.controller

    def _register(self) -> None:
        """Register, waiting out the session of this broker's previous run (a restart after kill -9 finds its old
        /brokers/ids/<id> until ZooKeeper expires that session, within zookeeper.session.timeout.ms)."""
        deadline = time.monotonic() + self.config["zookeeper.session.timeout.ms"] / 1000 + REGISTRATION_MARGIN_S
        while True:
            try:
                self.registration.start()
                return
            except BrokerIdInUseError as exc:
                if time.monotonic() > deadline:
                    raise
                log.info("%s; waiting for that session to expire", exc)
                time.sleep(REGISTRATION_RETRY_S)

    @property
    def broker_epoch(self) -> int:
        return self.registration.broker_epoch if self.registration is not None else -1

    def controlled_shutdown(self) -> None:
        """Ask the controller to move this broker's leaderships away (Kafka's KafkaServer.controlledShutdown)."""
        if not self.config["controlled.shutdown.enable"] or self.registration is None:
            return
        retries = self.config["controlled.shutdown.max.retries"]
        backoff_s = self.config["controlled.shutdown.retry.backoff.ms"] / 1000
        for attempt in range(1, retries + 1):
            log.info("Starting controlled shutdown (attempt %d of %d)", attempt, retries)
            if self._ask_controller():
                log.info("Controlled shutdown request returned successfully")
                return
            if attempt < retries:
                time.sleep(backoff_s)
        log.warning("Proceeding to do an unclean shutdown as all the controlled shutdown attempts failed")

    def _ask_controller(self) -> bool:
        try:
            controller_id = get_controller_id(self.zk)
            info = get_broker(self.zk, controller_id) if controller_id is not None else None
        except KazooException as exc:  # ZooKeeper unreachable: try again, then stop anyway
            log.warning("Controlled shutdown: cannot look up the controller in ZooKeeper (%r)", exc)
            return False
        if info is None:
            log.warning("No controller registered in ZooKeeper; controlled shutdown will retry")
            return False
        endpoint = endpoint_for(info, self.listener_name)
        client = BrokerClient(endpoint.host, endpoint.port, f"broker-{self.node_id}-controlled-shutdown",
                              timeout_s=CONTROLLED_SHUTDOWN_TIMEOUT_S, security=self._inter_broker_security)
        try:
            response = client.send(ControlledShutdownRequest(broker_id=self.node_id, broker_epoch=self.broker_epoch),
                                   CONTROLLED_SHUTDOWN_VERSION)
        except BrokerUnreachable as exc:
            log.warning("Controlled shutdown: controller %d unreachable (%s)", controller_id, exc)
            return False
        finally:
            client.close()
        if response.error_code != ErrorCode.NONE:
            log.warning("Controlled shutdown: controller %d answered %s", controller_id,
                        ErrorCode(response.error_code).name)
            return False
        if response.remaining_partitions:
            log.info("Remaining partitions to move: %s", ", ".join(
                f"{p.topic_name}-{p.partition_index}" for p in response.remaining_partitions))
            return False
        return True

    def close(self) -> None:
        if self.controller is not None:
            self.controller.shutdown()
        if self.registration is not None:
            self.registration.stop()
        self.zk.stop()
        self.zk.close()
