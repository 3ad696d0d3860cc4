"""ListConfigResources: API key 74, versions 0-1 (ListClientMetricsResources before KIP-1142 renamed it).

Behaviour (Kafka's KafkaApis.handleListConfigResources):
- Lists the resources that configs can be described for, of the types asked (all the version supports when the
  list is empty), in Kafka's order: groups, client metrics, broker loggers, brokers, topics.
- Groups and client metrics: none, since this broker keeps no group or client-metrics configs (describe_configs.py).
- Broker loggers and brokers: each live broker's id, on the listener the request came by; topics: every topic,
  internal ones included, as Kafka's metadata cache lists them.
- A type the version does not support: UNSUPPORTED_VERSION for the whole request, and no resources.
- With an authorizer the caller needs DESCRIBE_CONFIGS on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
Version notes:
- v0 lists client metrics only (its request has no types); v1 adds resource_types and each resource's type
  (KIP-1142): TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP.
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.config_resources import ResourceType
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.list_config_resources import (
    ListConfigResourcesRequest,
    ListConfigResourcesResponse,
)

API_KEY = 74

# ListConfigResourcesRequest.supportedResourceTypes, by version.
SUPPORTED_TYPES = {
    0: (ResourceType.CLIENT_METRICS,),
    1: (ResourceType.TOPIC, ResourceType.BROKER, ResourceType.BROKER_LOGGER, ResourceType.CLIENT_METRICS,
        ResourceType.GROUP),
}

_Resource = ListConfigResourcesResponse.ConfigResource


def handle(ctx: RequestContext, request: ListConfigResourcesRequest) -> ListConfigResourcesResponse:
    require(ctx, AclOperation.DESCRIBE_CONFIGS)
    supported = SUPPORTED_TYPES[min(ctx.api_version, max(SUPPORTED_TYPES))]
    wanted = set(request.resource_types) if request.resource_types else set(supported)
    if not wanted <= set(supported):
        return ListConfigResourcesResponse(error_code=ErrorCode.UNSUPPORTED_VERSION)
    view = ctx.broker.cluster_view
    broker_ids = [str(node.node_id) for node in view.alive_brokers(ctx.listener)]
    resources = []
    # Kafka's order; GROUP and CLIENT_METRICS have no resources here (no such configs are kept).
    for kind, names in ((ResourceType.BROKER_LOGGER, broker_ids), (ResourceType.BROKER, broker_ids),
                        (ResourceType.TOPIC, view.topic_names())):
        if kind in wanted:
            resources += [_Resource(resource_name=name, resource_type=kind) for name in names]
    return ListConfigResourcesResponse(error_code=ErrorCode.NONE, config_resources=resources)


serve(API_KEY, handle)
