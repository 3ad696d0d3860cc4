"""Config resources as DescribeConfigs, AlterConfigs and IncrementalAlterConfigs name them (Kafka's ConfigResource),
and the checks the two alter APIs share (Kafka's ConfigAdminManager.preprocess on the broker and the controller's
ControllerConfigurationValidator), with Kafka's error messages. With an authorizer, altering needs ALTER_CONFIGS on
the topic or group, or on the cluster for broker and logger configs (checked after the shared checks, as Kafka's
controller checks it after the broker's preprocessing).
"""

from __future__ import annotations

import enum
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from wirebroker.apis.authorization import require
from wirebroker.apis.context import RequestContext
from wirebroker.cluster.acls import AclOperation
from wirebroker.cluster.acls import ResourceType as AclResourceType
from wirebroker.cluster.controller import Controller
from wirebroker.cluster.metadata import TopicMetadata, validate_topic_name
from wirebroker.protocol.errors import (
    ErrorCode,
    InvalidRequestError,
    KafkaError,
    UnknownTopicOrPartitionError,
)

log = logging.getLogger(__name__)

T = TypeVar("T")


class ResourceType(enum.IntEnum):
    """ConfigResource.Type ids."""

    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


def require_config_access(ctx: RequestContext, operation: AclOperation, kind: ResourceType, name: str) -> None:
    """DESCRIBE_CONFIGS or ALTER_CONFIGS on what a config resource belongs to (KafkaApis and ControllerApis): a
    topic or group itself, the cluster for broker, logger and client-metrics configs; raises the refusal."""
    if kind is ResourceType.TOPIC:
        require(ctx, operation, AclResourceType.TOPIC, name)
    elif kind is ResourceType.GROUP:
        require(ctx, operation, AclResourceType.GROUP, name)
    else:
        require(ctx, operation)


def resource_type(type_id: int) -> ResourceType:
    try:
        return ResourceType(type_id)
    except ValueError:
        return ResourceType.UNKNOWN


def repeated_resources(resources: Iterable[Any]) -> set[tuple[int, str]]:
    """(type, name) of the resources a request names more than once: each of them is refused."""
    counts = Counter((r.resource_type, r.resource_name) for r in resources)
    return {key for key, count in counts.items() if count > 1}


def check_alter_resource(resource: Any, repeated: set[tuple[int, str]], null_keys: list[str]) -> ResourceType:
    """The broker-side checks of either alter API (ConfigAdminManager.preprocess); returns the resource's type.
    `null_keys`: the keys whose null value the API does not accept."""
    if (resource.resource_type, resource.resource_name) in repeated:
        raise InvalidRequestError("Each resource must appear at most once.")
    if any(count > 1 for count in Counter(c.name for c in resource.configs).values()):
        raise InvalidRequestError("Error due to duplicate config keys")
    if null_keys:
        raise InvalidRequestError("Null value not supported for : " + ", ".join(null_keys))
    kind = resource_type(resource.resource_type)
    if kind is ResourceType.UNKNOWN:
        raise InvalidRequestError(f"Unknown resource type {resource.resource_type}")
    if kind is ResourceType.CLIENT_METRICS:
        raise InvalidRequestError(f"Unsupported resource type: {kind.name}")  # configs this broker does not keep
    return kind


def check_node_id(name: str, node_id: int) -> None:
    """A non-empty BROKER or BROKER_LOGGER name to alter must be this node's id (ConfigAdminManager)."""
    try:
        requested = int(name)
    except ValueError:
        raise InvalidRequestError(f"Node id must be an integer, but it is: {name}") from None
    if requested != node_id:
        raise InvalidRequestError(f"Unexpected broker id, expected {node_id}, but received {name}")


def cannot_update_dynamically(names: Iterable[str]) -> InvalidRequestError:
    """What Kafka answers for broker keys it cannot change at run time: on this broker, every key."""
    return InvalidRequestError(f"Cannot update these configs dynamically: Set({', '.join(names)})")


def topic_to_alter(ctx: RequestContext, name: str, new_configs: Mapping[str, str]) -> TopicMetadata:
    """The topic a TOPIC resource names, once its new overrides are known to be valid; Kafka's controller checks in
    this order (ControllerConfigurationValidator, then the existence check)."""
    if not name:
        raise InvalidRequestError("Default topic resources are not allowed.")
    validate_topic_name(name)
    Controller.validate_configs(new_configs)
    topic = ctx.broker.metadata.topic(name)
    if topic is None:
        raise UnknownTopicOrPartitionError(f"The topic '{name}' does not exist.")
    return topic


def alter_resources(ctx: RequestContext, api: str, resources: Sequence[Any], result_class: type[T],
                    null_keys: Callable[[Any], list[str]], alter: Callable[[Any, ResourceType], None]) -> list[T]:
    """Run `alter` on each resource of an AlterConfigs or IncrementalAlterConfigs request after the shared checks,
    and answer each in request order (both APIs' responses have these fields). `null_keys(resource)`: the keys
    whose null value that API does not accept."""
    repeated = repeated_resources(resources)
    results = []
    for resource in resources:
        try:
            kind = check_alter_resource(resource, repeated, null_keys(resource))
            require_config_access(ctx, AclOperation.ALTER_CONFIGS, kind, resource.resource_name)
            alter(resource, kind)
            error = None
        except KafkaError as exc:
            log.info("%s of resource type %d %r from %s failed: %s", api, resource.resource_type,
                     resource.resource_name, ctx.client, exc)
            error = exc
        result = result_class(error_code=error.code if error else ErrorCode.NONE,  # type: ignore[call-arg]
                              resource_type=resource.resource_type, resource_name=resource.resource_name)
        result.error_message = str(error) if error else None  # type: ignore[attr-defined]
        results.append(result)
    return results
