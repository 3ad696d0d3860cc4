"""DescribeConfigs: API key 32, versions 1-4.

Behaviour (Kafka's ConfigHelper.describeConfigs):
- TOPIC (2): every topic config with its effective value and source: DYNAMIC_TOPIC_CONFIG (1) for the topic's
  overrides, STATIC_BROKER_CONFIG (4) for a broker key set at start-up, DEFAULT_CONFIG (5) otherwise; see
  topic_configs.py for synonyms. Unknown topic: UNKNOWN_TOPIC_OR_PARTITION; illegal name: INVALID_TOPIC_EXCEPTION.
- BROKER (4): named by this node's id, every broker key this broker knows, all read-only (none changes at run
  time); the empty name (cluster-wide dynamic defaults) has no configs here; another id: INVALID_REQUEST.
- BROKER_LOGGER (8): this node's loggers and their levels (source DYNAMIC_BROKER_LOGGER_CONFIG), see
  broker_loggers.py; the empty name or another id: INVALID_REQUEST.
- GROUP (32): the share-group keys of Kafka's GroupConfig, the group's own or their defaults (group_configs.py).
- CLIENT_METRICS (16) configs are not kept by this broker: INVALID_REQUEST for such a resource.
  A resource type Kafka does not know fails the whole request with INVALID_REQUEST, as in Kafka.
- configuration_keys, when given and not empty, limits the answer to those keys (unknown keys are left out).
- With an authorizer, DESCRIBE_CONFIGS (implied by ALTER_CONFIGS) on the topic or group, or on the cluster for
  broker, logger and client-metrics configs, else TOPIC_, GROUP_ or CLUSTER_AUTHORIZATION_FAILED for the resource.
Version notes:
- v0 is not offered (Kafka 4 dropped it, KIP-896). v1+ config_source and synonyms (include_synonyms, KIP-226); v3+
  include_documentation, config_type (KIP-569) and documentation (none here: this broker carries no config docs);
  v4+ flexible.
"""

from __future__ import annotations

import logging

from wirebroker.apis import broker_loggers
from wirebroker.apis.config_resources import (
    ResourceType,
    require_config_access,
    resource_type,
)
from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_configs import describe_group_configs
from wirebroker.apis.registry import serve
from wirebroker.apis.topic_configs import (
    ConfigEntry,
    ConfigSource,
    broker_config_entries,
    topic_config_entries,
)
from wirebroker.cluster.acls import AclOperation
from wirebroker.cluster.metadata import validate_topic_name
from wirebroker.protocol.errors import (
    ErrorCode,
    InvalidRequestError,
    KafkaError,
    UnknownTopicOrPartitionError,
)
from wirebroker.protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResponse,
)

log = logging.getLogger(__name__)

API_KEY = 32

_Result = DescribeConfigsResponse.DescribeConfigsResult
_Config = DescribeConfigsResponse.DescribeConfigsResourceResult
_Synonym = DescribeConfigsResponse.DescribeConfigsSynonym
_Resource = DescribeConfigsRequest.DescribeConfigsResource


def handle(ctx: RequestContext, request: DescribeConfigsRequest) -> DescribeConfigsResponse:
    if any(resource_type(r.resource_type) is ResourceType.UNKNOWN for r in request.resources):
        unknown = InvalidRequestError()
        return DescribeConfigsResponse(results=[_result(r, unknown) for r in request.resources])
    return DescribeConfigsResponse(results=[_describe(ctx, request, r) for r in request.resources])


def _describe(ctx: RequestContext, request: DescribeConfigsRequest, resource: _Resource) -> _Result:
    try:
        require_config_access(ctx, AclOperation.DESCRIBE_CONFIGS, resource_type(resource.resource_type),
                              resource.resource_name)
        configs = _configs(ctx, request, resource)
    except KafkaError as exc:
        log.info("DescribeConfigs of %s %r from %s failed: %s", resource_type(resource.resource_type).name,
                 resource.resource_name, ctx.client, exc)
        return _result(resource, exc)
    wanted = resource.configuration_keys
    result = _result(resource, None)
    result.configs = [c for c in configs if not wanted or c.name in wanted]
    return result


def _configs(ctx: RequestContext, request: DescribeConfigsRequest, resource: _Resource) -> list[_Config]:
    kind = resource_type(resource.resource_type)
    name = resource.resource_name
    broker = ctx.broker
    if kind is ResourceType.TOPIC:
        validate_topic_name(name)
        topic = broker.metadata.topic(name)
        if topic is None:
            raise UnknownTopicOrPartitionError()
        entries = topic_config_entries(topic.configs, broker.config)
    elif kind is ResourceType.BROKER:
        if not name:
            return []  # no dynamic cluster-wide defaults on this broker
        if _broker_id(name) != broker.node_id:
            raise InvalidRequestError(
                f"Unexpected broker id, expected {broker.node_id} or empty string, but received {name}")
        entries = broker_config_entries(broker.config)
    elif kind is ResourceType.BROKER_LOGGER:
        if not name:
            raise InvalidRequestError("Broker id must not be empty")
        if _broker_id(name) != broker.node_id:
            raise InvalidRequestError(f"Unexpected broker id, expected {broker.node_id} but received {name}")
        return [_logger_config(logger, level) for logger, level in broker_loggers.logger_levels().items()]
    elif kind is ResourceType.GROUP:
        return [_group_config(*described) for described in describe_group_configs(ctx, name)]
    else:
        raise InvalidRequestError(f"Unsupported resource type: {kind.name}")
    return [_config(entry, request.include_synonyms) for entry in entries]


def _broker_id(name: str) -> int:
    try:
        return int(name)
    except ValueError:
        raise InvalidRequestError(f"Broker id must be an integer, but it is: {name}") from None


def _config(entry: ConfigEntry, include_synonyms: bool) -> _Config:
    config = _Config(name=entry.name, read_only=entry.read_only, config_source=entry.describe_source(),
                     is_sensitive=entry.is_sensitive, config_type=entry.config_type)
    config.value = None if entry.is_sensitive else entry.value
    config.documentation = None  # even with include_documentation: this broker carries no config documentation
    if include_synonyms:
        config.synonyms = [_synonym(s.name, s.value, s.source) for s in entry.describe_synonyms()]
    return config


def _synonym(name: str, value: str | None, source: int) -> _Synonym:
    synonym = _Synonym(name=name, source=source)
    synonym.value = value
    return synonym


def _group_config(name: str, value: str, source: int, config_type: int) -> _Config:
    config = _Config(name=name, value=value, read_only=False, config_source=source, is_sensitive=False,
                     config_type=config_type)
    config.documentation = None
    return config


def _logger_config(logger: str, level: str) -> _Config:
    config = _Config(name=logger, value=level, read_only=False,
                     config_source=ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG, is_sensitive=False)
    config.documentation = None
    return config


def _result(resource: _Resource, error: KafkaError | None) -> _Result:
    return _Result(error_code=error.code if error else ErrorCode.NONE, error_message=str(error) if error else None,
                   resource_type=resource.resource_type, resource_name=resource.resource_name)


serve(API_KEY, handle)
