"""IncrementalAlterConfigs: API key 44, versions 0-1 (KIP-339).

Behaviour (Kafka's ConfigAdminManager.preprocess on the broker, then ConfigurationControlManager):
- TOPIC (2): SET (0) a key, DELETE (1) it (back to the broker default), APPEND (2) or SUBTRACT (3) items of a LIST
  key (cleanup.policy, the throttled-replica lists); APPEND/SUBTRACT start from the topic's override, else the key's
  own default, as Kafka does. The topic's resulting overrides are validated as a whole (INVALID_CONFIG for unknown
  keys, bad values, or APPEND/SUBTRACT on a key that is not a LIST), then stored and applied to its logs.
  Unknown topic: UNKNOWN_TOPIC_OR_PARTITION; the empty name: INVALID_REQUEST.
- BROKER (4): this broker changes no broker config at run time, so every SET/APPEND/SUBTRACT gets Kafka's answer
  for keys it cannot update dynamically: INVALID_REQUEST "Cannot update these configs dynamically: Set(...)".
  DELETE alone succeeds: there is no dynamic value to delete. A name other than "" or this node's id:
  INVALID_REQUEST.
- BROKER_LOGGER (8): SET a logger's level or DELETE it, until restart (KIP-412; see broker_loggers.py).
- A resource named twice, a key given twice in one resource, a null value for anything but DELETE, an unknown
  operation or resource type: INVALID_REQUEST, with Kafka's messages. CLIENT_METRICS configs are not kept here:
  INVALID_REQUEST.
- GROUP (32): SET or DELETE the share-group keys of Kafka's GroupConfig (apis/group_configs.py).
- validate_only checks everything and changes nothing.
Version notes:
- v1 is flexible.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Mapping, Sequence

from wirebroker.apis import broker_loggers
from wirebroker.apis.config_resources import (
    ResourceType,
    alter_resources,
    cannot_update_dynamically,
    check_node_id,
    topic_to_alter,
)
from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_configs import alter_group_configs
from wirebroker.apis.registry import serve
from wirebroker.apis.topic_configs import ConfigType, topic_config_type
from wirebroker.log.config import CONFIG_KEYS_BY_NAME
from wirebroker.protocol.errors import InvalidConfigError, InvalidRequestError
from wirebroker.protocol.messages.incremental_alter_configs import (
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)

log = logging.getLogger(__name__)

API_KEY = 44

_Resource = IncrementalAlterConfigsRequest.AlterConfigsResource
_Config = IncrementalAlterConfigsRequest.AlterableConfig


class OpType(enum.IntEnum):
    """AlterConfigOp.OpType ids."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


def handle(ctx: RequestContext, request: IncrementalAlterConfigsRequest) -> IncrementalAlterConfigsResponse:
    def alter(resource: _Resource, kind: ResourceType) -> None:
        _alter(ctx, resource, kind, request.validate_only)

    return IncrementalAlterConfigsResponse(responses=alter_resources(
        ctx, "IncrementalAlterConfigs", request.resources, IncrementalAlterConfigsResponse.AlterConfigsResourceResponse,
        _null_keys, alter,
    ))


def _null_keys(resource: _Resource) -> list[str]:
    return [c.name for c in resource.configs if c.config_operation != OpType.DELETE and c.value is None]


def _alter(ctx: RequestContext, resource: _Resource, kind: ResourceType, validate_only: bool) -> None:
    ops = [_op(config) for config in resource.configs]
    if kind is ResourceType.TOPIC:
        _alter_topic(ctx, resource, ops, validate_only)
    elif kind is ResourceType.BROKER:
        _alter_broker(ctx, resource, ops)
    elif kind is ResourceType.GROUP:
        if any(op in (OpType.APPEND, OpType.SUBTRACT) for op in ops):
            raise InvalidConfigError("APPEND and SUBTRACT are not allowed on group configs")
        alter_group_configs(ctx, resource.resource_name, {
            c.name: c.value if op is OpType.SET else None for c, op in zip(resource.configs, ops, strict=True)},
            validate_only)
    else:
        _alter_loggers(ctx, resource, ops, validate_only)


def _op(config: _Config) -> OpType:
    try:
        return OpType(config.config_operation)
    except ValueError:
        raise InvalidRequestError(f"Unknown operations type {config.config_operation}") from None


def _alter_topic(ctx: RequestContext, resource: _Resource, ops: Sequence[OpType], validate_only: bool) -> None:
    existing = ctx.broker.metadata.topic(resource.resource_name)
    configs = _apply(existing.configs if existing else {}, resource.configs, ops)
    topic = topic_to_alter(ctx, resource.resource_name, configs)
    ctx.broker.controller.set_topic_configs(topic.name, configs, validate_only)


def _apply(current: Mapping[str, str], changes: Sequence[_Config], ops: Sequence[OpType]) -> dict[str, str]:
    """The topic's overrides after the operations (Kafka's incrementalAlterConfigResource)."""
    configs = dict(current)
    for change, op in zip(changes, ops, strict=True):
        if op is OpType.SET:
            configs[change.name] = change.value
        elif op is OpType.DELETE:
            configs.pop(change.name, None)
        else:
            configs[change.name] = _list_change(configs.get(change.name), change, op)
    return configs


def _list_change(value: str | None, change: _Config, op: OpType) -> str:
    if topic_config_type(change.name) is not ConfigType.LIST:
        raise InvalidConfigError(f"Can't {op.name} to key {change.name} because its type is not LIST.")
    if value is None:
        value = CONFIG_KEYS_BY_NAME[change.name].default or ""
    items = [item for item in value.split(",") if item]
    for item in change.value.split(","):
        if op is OpType.APPEND and item not in items:
            items.append(item)
        elif op is OpType.SUBTRACT and item in items:
            items.remove(item)
    return ",".join(items)


def _alter_broker(ctx: RequestContext, resource: _Resource, ops: Sequence[OpType]) -> None:
    if resource.resource_name:
        check_node_id(resource.resource_name, ctx.broker.node_id)
    changed = [config.name for config, op in zip(resource.configs, ops, strict=True) if op is not OpType.DELETE]
    if changed:
        raise cannot_update_dynamically(changed)


def _alter_loggers(ctx: RequestContext, resource: _Resource, ops: Sequence[OpType], validate_only: bool) -> None:
    check_node_id(resource.resource_name, ctx.broker.node_id)
    for config, op in zip(resource.configs, ops, strict=True):
        if op in (OpType.APPEND, OpType.SUBTRACT):
            raise InvalidRequestError(f"{op.name} operation is not allowed for the BROKER_LOGGER resource")
        broker_loggers.check_level_change(config.name, config.value if op is OpType.SET else None)
    if validate_only:
        return
    for config, op in zip(resource.configs, ops, strict=True):
        broker_loggers.change_level(config.name, config.value if op is OpType.SET else None)
        log.info("Log level of logger %s set to %s at the request of %s", config.name,
                 config.value if op is OpType.SET else "its parent's", ctx.client)


serve(API_KEY, handle)
