"""CreateTopics: API key 19, versions 2-7.

Behaviour (Kafka's ControllerApis.createTopics and ReplicationControlManager.createTopics, in their order):
- A name given twice: INVALID_REQUEST "Duplicate topic name." for it, the others proceed. `__cluster_metadata`
  cannot be created (TOPIC_AUTHORIZATION_FAILED, as Kafka). More than 10,000 partitions in one request: every topic
  gets POLICY_VIOLATION.
- Per topic: an illegal name, or one that differs from an existing topic only by '.' versus '_', gives
  INVALID_TOPIC_EXCEPTION; an existing topic TOPIC_ALREADY_EXISTS; a config with a null value, an unknown key or a
  bad value INVALID_CONFIG; then the partitions: -1 takes `num.partitions` and `default.replication.factor`; a
  replication factor of 0 or below -1 is INVALID_REPLICATION_FACTOR, more than the one broker
  INVALID_REPLICATION_FACTOR with Kafka's "Unable to replicate the partition N time(s)" message; a partition
  count of 0 or below -1 INVALID_PARTITIONS.
- Manual assignments need num_partitions and replication_factor -1 (else INVALID_REQUEST), cover partitions
  0..n-1 once each, and name only registered brokers, the same number for each partition (INVALID_REPLICA_ASSIGNMENT,
  Kafka's messages): this broker alone on a single node, the brokers in /brokers/ids in ZooKeeper mode.
- validate_only answers as if created and creates nothing. On a single node creation completes before the answer.
  In ZooKeeper mode (Kafka's ZkAdminManager.createTopics) the topics are written to ZooKeeper and the answer waits,
  off the request thread, until this broker's metadata shows every partition of them with a leader, at most
  timeout_ms: those not there by then get REQUEST_TIMED_OUT, as with timeout_ms <= 0 at once; the controller
  creates them all the same (apis/delayed_topic_change.py).
- With an authorizer: CREATE on the cluster, or else on the topic, or TOPIC_AUTHORIZATION_FAILED "Authorization
  failed." (the topic then counts for nothing, not even the partition limit); a created topic the principal may
  not DESCRIBE_CONFIGS gets TOPIC_AUTHORIZATION_FAILED as its v5+ config error, without configs or counts.
Version notes:
- v2-4 answer name, error code and message. v5+ (KIP-525) also the partition count, replication factor and every
  config of the new topic with its source, as DescribeConfigs would show them; v5+ flexible; v6+ quota errors
  (none here); v7+ the topic id (KIP-516).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping

from wirebroker.apis.context import RequestContext
from wirebroker.apis.delayed_topic_change import (
    TopicChange,
    answer_when_done,
    timed_out,
)
from wirebroker.apis.registry import serve
from wirebroker.apis.replica_assignment import (
    MAX_PARTITIONS_PER_REQUEST,
    check_manual_assignment,
)
from wirebroker.apis.topic_configs import topic_config_entries
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.cluster.controller import USE_DEFAULT, Controller
from wirebroker.cluster.metadata import TopicMetadata, validate_topic_name
from wirebroker.protocol.errors import (
    ErrorCode,
    InvalidConfigError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidRequestError,
    InvalidTopicError,
    KafkaError,
    PolicyViolationError,
    TopicAlreadyExistsError,
    TopicAuthorizationFailedError,
)
from wirebroker.protocol.messages.create_topics import (
    CreateTopicsRequest,
    CreateTopicsResponse,
)

log = logging.getLogger(__name__)

API_KEY = 19

CLUSTER_METADATA_TOPIC = "__cluster_metadata"  # Kafka's metadata log: never a user topic
FIRST_CONFIGS_VERSION = 5  # KIP-525
FIRST_TOPIC_ID_VERSION = 7  # KIP-516

_Result = CreateTopicsResponse.CreatableTopicResult
_Config = CreateTopicsResponse.CreatableTopicConfigs


def handle(ctx: RequestContext, request: CreateTopicsRequest) -> CreateTopicsResponse | None:
    counts = Counter(topic.name for topic in request.topics)
    duplicates = [name for name, count in counts.items() if count > 1]
    creatable = {name for name, count in counts.items() if count == 1 and name != CLUSTER_METADATA_TOPIC}
    if not ctx.authorize(AclOperation.CREATE, log_denied=False):  # CREATE on the cluster creates any topic
        creatable = ctx.authorized(AclOperation.CREATE, ResourceType.TOPIC, creatable)
    describable = ctx.authorized(AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, creatable, log_denied=False)
    wanted = [t for t in request.topics if t.name in creatable]
    try:
        _check_total_partitions(wanted, ctx.broker.config["num.partitions"])
    except PolicyViolationError as exc:
        return CreateTopicsResponse(topics=[_error(topic.name, exc) for topic in request.topics])
    outcomes = [_create(ctx, topic, request.validate_only, topic.name in describable) for topic in wanted]
    results = [result for result, _ in outcomes]
    results += [_error(name, InvalidRequestError("Duplicate topic name.")) for name in duplicates]
    if counts[CLUSTER_METADATA_TOPIC] == 1:
        log.info("Rejecting creation of internal topic %s asked by %s", CLUSTER_METADATA_TOPIC, ctx.client)
    results += [_error(name, TopicAuthorizationFailedError("Authorization failed.")) for name, count in counts.items()
                if count == 1 and name not in creatable]
    changes = [] if request.validate_only else [change for _, change in outcomes if change is not None]

    def answer(late: set[str]) -> CreateTopicsResponse:
        return CreateTopicsResponse(topics=[_timed_out(ctx, result) if result.name in late else result
                                            for result in results])

    return answer_when_done(ctx, request.timeout_ms, changes, answer)


def _check_total_partitions(topics: Iterable[CreateTopicsRequest.CreatableTopic], default_partitions: int) -> None:
    total = 0
    for topic in topics:
        if topic.assignments:
            total += len(topic.assignments)
        elif topic.num_partitions == USE_DEFAULT:
            total += default_partitions
        elif topic.num_partitions > 0:
            total += topic.num_partitions
    if total > MAX_PARTITIONS_PER_REQUEST:
        raise PolicyViolationError("Excessively large number of partitions per request.")


def _create(ctx: RequestContext, topic: CreateTopicsRequest.CreatableTopic, validate_only: bool,
            describable: bool) -> tuple[_Result, TopicChange | None]:
    """The topic's result, and the change to wait for when it was created."""
    broker = ctx.broker
    try:
        _check_new_name(ctx, topic.name)
        configs = _requested_configs(topic)
        partitions, replication_factor = _partitions_and_replication(ctx, topic)
        assignment = {a.partition_index: list(a.broker_ids) for a in topic.assignments} or None
        created = broker.controller.create_topic(topic.name, partitions, replication_factor, configs, validate_only,
                                                 assignment)
    except KafkaError as exc:
        log.info("CreateTopics of %s from %s failed: %s: %s", topic.name, ctx.client, exc.code.name, exc)
        return _error(topic.name, exc), None
    return (_success(ctx, created, replication_factor, describable),
            TopicChange(created.name, created.partitions))


def _check_new_name(ctx: RequestContext, name: str) -> None:
    validate_topic_name(name)
    metadata = ctx.broker.metadata
    if metadata.topic(name) is not None:
        raise TopicAlreadyExistsError(f"Topic '{name}' already exists.")
    # '.' and '_' collide in metric names (Kafka's Topic.hasCollisionChars).
    if "." in name or "_" in name:
        normalized = name.replace(".", "_")
        for existing in metadata.topics():
            if existing.name.replace(".", "_") == normalized:
                raise InvalidTopicError(f"Topic '{name}' collides with existing topic: {existing.name}")


def _requested_configs(topic: CreateTopicsRequest.CreatableTopic) -> dict[str, str]:
    nulls = [config.name for config in topic.configs if config.value is None]
    if nulls:
        raise InvalidConfigError("Null value not supported for topic configs: " + ",".join(nulls))
    configs = {config.name: config.value for config in topic.configs}
    Controller.validate_configs(configs)
    return configs


def _partitions_and_replication(ctx: RequestContext, topic: CreateTopicsRequest.CreatableTopic) -> tuple[int, int]:
    if topic.assignments:
        return _manual_assignment(ctx, topic)
    if topic.replication_factor < USE_DEFAULT or topic.replication_factor == 0:
        raise InvalidReplicationFactorError(
            "Replication factor must be larger than 0, or -1 to use the default value.")
    if topic.num_partitions < USE_DEFAULT or topic.num_partitions == 0:
        raise InvalidPartitionsError("Number of partitions was set to an invalid non-positive value.")
    config = ctx.broker.config
    partitions = config["num.partitions"] if topic.num_partitions == USE_DEFAULT else topic.num_partitions
    replication_factor = (config["default.replication.factor"] if topic.replication_factor == USE_DEFAULT
                          else topic.replication_factor)
    ctx.broker.controller.check_replication_factor(replication_factor)
    return partitions, replication_factor


def _manual_assignment(ctx: RequestContext, topic: CreateTopicsRequest.CreatableTopic) -> tuple[int, int]:
    if topic.replication_factor != USE_DEFAULT:
        raise InvalidRequestError(
            "A manual partition assignment was specified, but replication factor was not set to -1.")
    if topic.num_partitions != USE_DEFAULT:
        raise InvalidRequestError("A manual partition assignment was specified, but numPartitions was not set to -1.")
    assigned: set[int] = set()
    replication_factor = None
    registered = ctx.broker.controller.registered_brokers()
    for assignment in topic.assignments:
        if assignment.partition_index in assigned:
            raise InvalidReplicaAssignmentError(
                f"Found multiple manual partition assignments for partition {assignment.partition_index}")
        check_manual_assignment(assignment.broker_ids, registered, replication_factor)
        replication_factor = len(assignment.broker_ids)
        assigned.add(assignment.partition_index)
    if assigned != set(range(len(assigned))):
        raise InvalidReplicaAssignmentError("partitions should be a consecutive 0-based integer sequence")
    return len(assigned), replication_factor


def _success(ctx: RequestContext, topic: TopicMetadata, replication_factor: int, describable: bool) -> _Result:
    """A created topic's result: its configs, partitions and replication factor only for a principal that may
    DESCRIBE_CONFIGS it (else TOPIC_AUTHORIZATION_FAILED as its config error, as Kafka's controller answers)."""
    result = _Result(name=topic.name, error_code=ErrorCode.NONE)
    result.error_message = None
    if ctx.api_version >= FIRST_TOPIC_ID_VERSION:
        result.topic_id = topic.topic_id
    if ctx.api_version >= FIRST_CONFIGS_VERSION and not describable:
        result.topic_config_error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
    elif ctx.api_version >= FIRST_CONFIGS_VERSION:
        result.num_partitions = topic.partitions
        result.replication_factor = replication_factor
        result.configs = _described_configs(topic.configs, ctx)
    return result


def _described_configs(overrides: Mapping[str, str], ctx: RequestContext) -> list[_Config]:
    configs = []
    for entry in topic_config_entries(overrides, ctx.broker.config):
        config = _Config(name=entry.name, read_only=entry.read_only, config_source=entry.effective_source(),
                         is_sensitive=entry.is_sensitive)
        config.value = None if entry.is_sensitive else entry.value
        configs.append(config)
    return configs


def _timed_out(ctx: RequestContext, created: _Result) -> _Result:
    """A topic created but not yet led everywhere: its id stays (v7+), its configs and counts go (as Kafka's)."""
    result = _error(created.name, timed_out(created.name))
    if ctx.api_version >= FIRST_TOPIC_ID_VERSION:
        result.topic_id = created.topic_id
    return result


def _error(name: str, exc: KafkaError) -> _Result:
    return _Result(name=name, error_code=exc.code, error_message=str(exc))


serve(API_KEY, handle)
