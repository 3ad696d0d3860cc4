"""AlterConfigs: API key 33, versions 0-2 (the legacy, non-incremental form; IncrementalAlterConfigs replaced it).

Behaviour (Kafka's ConfigAdminManager.preprocess on the broker, then ConfigurationControlManager.legacyAlterConfigs):
- TOPIC (2): the given configs become the topic's complete set of overrides; keys left out go back to their
  defaults. The set is validated as a whole (INVALID_CONFIG), then stored and applied to the topic's logs. Unknown
  topic: UNKNOWN_TOPIC_OR_PARTITION; the empty name: INVALID_REQUEST.
- BROKER (4): this broker changes no broker config at run time, so any key gets Kafka's answer for keys it cannot
  update dynamically: INVALID_REQUEST "Cannot update these configs dynamically: Set(...)"; an empty set succeeds
  (there is no dynamic config to clear). A name other than "" or this node's id: INVALID_REQUEST.
- BROKER_LOGGER is for IncrementalAlterConfigs only (KIP-412): INVALID_REQUEST "Unknown resource type 8", as Kafka.
- A resource named twice, a key given twice, a null value, an unknown resource type: INVALID_REQUEST with Kafka's
  messages. GROUP and CLIENT_METRICS configs are not kept here: INVALID_REQUEST.
- validate_only checks everything and changes nothing.
Version notes:
- v1 same as v0; v2 flexible.
"""

from __future__ import annotations

from wirebroker.apis.config_resources import (
    ResourceType,
    alter_resources,
    cannot_update_dynamically,
    check_node_id,
    topic_to_alter,
)
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.protocol.errors import InvalidRequestError
from wirebroker.protocol.messages.alter_configs import AlterConfigsRequest, AlterConfigsResponse

API_KEY = 33

_Resource = AlterConfigsRequest.AlterConfigsResource


def handle(ctx: RequestContext, request: AlterConfigsRequest) -> AlterConfigsResponse:
    def alter(resource: _Resource, kind: ResourceType) -> None:
        _alter(ctx, resource, kind, request.validate_only)

    return AlterConfigsResponse(responses=alter_resources(
        ctx, "AlterConfigs", request.resources, AlterConfigsResponse.AlterConfigsResourceResponse,
        lambda resource: [c.name for c in resource.configs if c.value is None], alter,
    ))


def _alter(ctx: RequestContext, resource: _Resource, kind: ResourceType, validate_only: bool) -> None:
    configs = {config.name: config.value for config in resource.configs}
    if kind is ResourceType.TOPIC:
        topic = topic_to_alter(ctx, resource.resource_name, configs)
        ctx.broker.controller.set_topic_configs(topic.name, configs, validate_only)
    elif kind is ResourceType.BROKER:
        if resource.resource_name:
            check_node_id(resource.resource_name, ctx.broker.node_id)
        if configs:
            raise cannot_update_dynamically(configs)
    else:
        raise InvalidRequestError(f"Unknown resource type {resource.resource_type}")


serve(API_KEY, handle)
