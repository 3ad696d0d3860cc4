"""Cluster membership in ZooKeeper: the cluster id, and each live broker's ephemeral /brokers/ids/<id>.

A broker registers with an ephemeral znode holding its BrokerInfo (data.py); the znode lives as long as the
broker's ZooKeeper session, so the controller (watching /brokers/ids) learns of a broker's death when its session
expires. The znode's creation zxid is the broker epoch (Kafka's czxid), which tells a restarted broker from its
previous incarnation. BrokerRegistration re-creates the znode in every new session after an expiry, as Kafka's
KafkaZkClient does on session re-initialisation.
"""

from __future__ import annotations

import logging
import threading
import time

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import NodeExistsError, NoNodeError

from wirebroker.cluster.zk import paths
from wirebroker.cluster.zk.data import BrokerInfo, decode_cluster_id, encode_cluster_id

log = logging.getLogger(__name__)


class BrokerIdInUseError(RuntimeError):
    """Another live session holds /brokers/ids/<id>: two brokers share a broker.id, or the previous run's session has
    not expired yet (it does within zookeeper.session.timeout.ms)."""


def ensure_persistent_paths(zk: KazooClient) -> None:
    """Create the persistent top-level znodes every broker expects (Kafka's createTopLevelPaths)."""
    for path in paths.PERSISTENT_PATHS:
        zk.ensure_path(path)


def get_or_create_cluster_id(zk: KazooClient, proposed_id: str) -> str:
    """The id in /cluster/id, which the first broker to start writes with its proposal."""
    try:
        zk.create(paths.CLUSTER_ID, encode_cluster_id(proposed_id), makepath=True)
        return proposed_id
    except NodeExistsError:
        data, _ = zk.get(paths.CLUSTER_ID)
        return decode_cluster_id(data)


def register_broker(zk: KazooClient, info: BrokerInfo) -> int:
    """Create /brokers/ids/<id> (ephemeral) and return the broker epoch; BrokerIdInUseError if another session holds
    it (a retry within our own session finds its own znode and succeeds, as Kafka's checkedEphemeralCreate)."""
    path = paths.broker(info.broker_id)
    try:
        zk.create(path, info.encode(int(time.time() * 1000)), ephemeral=True, makepath=True)
    except NodeExistsError:
        pass
    try:
        _, stat = zk.get(path)
    except NoNodeError:  # its owner's session ended between our create and get: try again
        return register_broker(zk, info)
    if stat.ephemeralOwner != zk.client_id[0]:
        raise BrokerIdInUseError(
            f"Error while creating ephemeral at {path}, node already exists and owner '{stat.ephemeralOwner:#x}' "
            f"does not match current session '{zk.client_id[0]:#x}': is broker.id={info.broker_id} already running?")
    log.info("Registered broker %d at path %s with addresses: %s, czxid (broker epoch): %d", info.broker_id, path,
             ",".join(e.connection_string for e in info.endpoints), stat.czxid)
    return stat.czxid


def get_broker(zk: KazooClient, broker_id: int) -> BrokerInfo | None:
    try:
        data, _ = zk.get(paths.broker(broker_id))
    except NoNodeError:
        return None
    return BrokerInfo.decode(broker_id, data)


def get_live_brokers(zk: KazooClient) -> dict[int, BrokerInfo]:
    """Every registered broker, by id (one that leaves while being read is left out)."""
    brokers = {}
    for child in zk.get_children(paths.BROKER_IDS):
        info = get_broker(zk, int(child))
        if info is not None:
            brokers[info.broker_id] = info
    return dict(sorted(brokers.items()))


class BrokerRegistration:
    """Keeps this broker's /brokers/ids/<id> for as long as it runs, across session expiries."""

    def __init__(self, zk: KazooClient, info: BrokerInfo) -> None:
        self.zk = zk
        self.info = info
        self.broker_epoch = -1
        self._session_lost = False
        self._lock = threading.Lock()

    def start(self) -> int:
        """Register now and in every later session; returns the broker epoch."""
        self.broker_epoch = register_broker(self.zk, self.info)
        self.zk.add_listener(self._on_state)
        return self.broker_epoch

    def stop(self) -> None:
        """Stop re-registering; the znode goes with the session (Kafka never deletes it itself)."""
        self.zk.remove_listener(self._on_state)

    def _on_state(self, state: KazooState) -> None:
        # Kazoo calls state listeners on its connection thread, where no ZooKeeper call may block.
        with self._lock:
            if state == KazooState.LOST:
                self._session_lost = True
                log.warning("Broker %d lost its ZooKeeper session; it re-registers when a new session is established",
                            self.info.broker_id)
            elif state == KazooState.CONNECTED and self._session_lost:
                self._session_lost = False
                self.zk.handler.spawn(self._reregister)

    def _reregister(self) -> None:
        try:
            self.broker_epoch = register_broker(self.zk, self.info)
        except Exception:
            log.exception("Broker %d could not re-register at %s in its new ZooKeeper session", self.info.broker_id,
                          paths.broker(self.info.broker_id))
