"""What an API handler gets besides its request: who asked, at which version, and the broker's services."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from wirebroker.cluster.acls import (
    CLUSTER_RESOURCE_NAME,
    AclOperation,
    AclStore,
    ResourceType,
)
from wirebroker.cluster.client_quota_store import ClientQuotaStore
from wirebroker.cluster.cluster_view import ClusterView
from wirebroker.cluster.controller import TopicAdmin
from wirebroker.cluster.metadata import MetadataStore, TopicMetadata
from wirebroker.cluster.scram_credentials import ScramCredentialStore
from wirebroker.config import BrokerConfig, Listener
from wirebroker.coordinator.group_coordinator import GroupCoordinator
from wirebroker.coordinator.internal_topic import InternalTopic
from wirebroker.coordinator.offsets_topic import OffsetsTopic
from wirebroker.coordinator.transaction_coordinator import TransactionCoordinator
from wirebroker.log.manager import LogManager
from wirebroker.protocol.headers import RequestHeader
from wirebroker.replica.fetch_session import FetchSessionCache
from wirebroker.replica.manager import ReplicaManager
from wirebroker.replica.purgatory import DelayedOperationPurgatory

if TYPE_CHECKING:  # imported only by a cluster member (kazoo only in ZooKeeper mode): the single node starts faster
    from concurrent.futures import Executor

    from wirebroker.cluster.authorizer import Authorizer
    from wirebroker.cluster.metadata_cache import MetadataCache
    from wirebroker.cluster.zk.controller import KafkaController
    from wirebroker.coordinator.transaction_partition_adds import (
        AddPartitionsToTxnManager,
    )


class BrokerServices(Protocol):
    """What the handlers use of the broker (Kafka hands KafkaApis the same services); server/broker.py provides it."""

    config: BrokerConfig
    node_id: int
    cluster_id: str
    metadata: MetadataStore
    controller: TopicAdmin  # the single-node Controller, or ZkAdmin in ZooKeeper mode
    acls: AclStore
    scram_credentials: ScramCredentialStore  # SCRAM-SHA-256/512 users (Describe/AlterUserScramCredentials, SASL)
    client_quotas: ClientQuotaStore  # Describe/AlterClientQuotas; throttling (server/quotas.py) once one is set
    authorizer: Authorizer | None  # with authorizer.class.name: the ACLs enforced (cluster/authorizer.py)
    log_manager: LogManager
    replica_manager: ReplicaManager
    fetch_sessions: FetchSessionCache
    group_coordinator: GroupCoordinator
    offsets_topic: OffsetsTopic
    transaction_coordinator: TransactionCoordinator
    transaction_state_topic: InternalTopic  # __transaction_state
    transaction_partition_adds: AddPartitionsToTxnManager  # a partition leader's adds (KIP-890 part 2)
    cluster_view: ClusterView  # what Metadata & co. tell clients: the single node, or the metadata cache
    metadata_cache: MetadataCache | None  # in a cluster: what the controller last sent (UpdateMetadata)
    kafka_controller: KafkaController | None  # in ZooKeeper mode: this broker's candidacy for controller
    topic_purgatory: DelayedOperationPurgatory | None  # in a cluster: topic changes awaiting UpdateMetadata
    group_requests: Executor | None  # in a cluster: the thread group requests run on (apis/group_requests.py)

    def bound_listeners(self) -> list[Listener]: ...

    def advertised_endpoint(self, listener_name: str) -> tuple[str, int]: ...

    def auto_create_topic(self, name: str) -> TopicMetadata: ...


class _NoResponse:
    """A handler's answer when the protocol wants none on the wire (produce with acks=0)."""

    def __repr__(self) -> str:
        return "NO_RESPONSE"


NO_RESPONSE = _NoResponse()


@dataclass(frozen=True, slots=True)
class CloseConnection:
    """A handler's answer when the connection must be closed instead (the reason goes to the log)."""

    reason: str


@dataclass(slots=True, eq=False)
class RequestContext:
    header: RequestHeader
    client_address: str
    connection_id: str
    listener: str
    broker: BrokerServices
    # Answer the request: a response message, NO_RESPONSE, CloseConnection, or the exception the handler failed with
    # (a KafkaError becomes its code). Called while the handler runs, the answer is returned by the dispatcher;
    # called later (from a purgatory or a thread of its own) it is encoded and sent then.
    respond: Callable[[Any], None]
    principal: str = "User:ANONYMOUS"  # Kafka's KafkaPrincipal as "type:name"; ANONYMOUS when not authenticated
    security_protocol: str = "PLAINTEXT"  # the listener's security protocol (SSL, SASL_SSL, ...)

    @property
    def api_version(self) -> int:
        return self.header.api_version

    @property
    def client_id(self) -> str | None:
        return self.header.client_id

    @property
    def client(self) -> str:
        """Who asked, for log lines: the client's address and client id."""
        return f"{self.client_address} (client id {self.header.client_id!r})"

    @property
    def client_ip(self) -> str:
        """The client's address without its port (and without an IPv6 address's brackets)."""
        return self.client_address.rsplit(":", 1)[0].strip("[]")

    def authorize(self, operation: AclOperation, resource_type: ResourceType = ResourceType.CLUSTER,
                  name: str = CLUSTER_RESOURCE_NAME, *, log_denied: bool = True) -> bool:
        """Kafka's AuthHelper.authorize: may this request's principal do `operation` to the resource (the cluster
        by default)? Always True without an authorizer. A refusal is logged unless `log_denied` is False (Kafka's
        logIfDenied, off where a refusal only filters a listing)."""
        authorizer = self.broker.authorizer
        if authorizer is None or authorizer.authorize(self.principal, self.client_ip, operation, resource_type, name):
            return True
        if log_denied:
            authorizer.log_denied(self.principal, self.client_ip, operation, resource_type, name, self.header.api_key)
        return False

    def authorized(self, operation: AclOperation, resource_type: ResourceType, names: Iterable[str], *,
                   log_denied: bool = True) -> set[str]:
        """Kafka's AuthHelper.filterByAuthorized: the names, each asked about once, this request may act on."""
        return {name for name in set(names) if self.authorize(operation, resource_type, name, log_denied=log_denied)}
