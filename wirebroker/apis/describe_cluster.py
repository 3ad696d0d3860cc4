"""DescribeCluster: API key 60, versions 0-2.

Behaviour (Kafka's AuthHelper.computeDescribeClusterResponse on a broker):
- The cluster id, the live brokers and the controller id from the broker's cluster view: on a single broker this
  node (at the advertised address of the listener the request came in on, with its broker.rack) as broker and
  controller; in a cluster, the metadata cache the controller fills (brokers' endpoints on that listener, racks,
  and the controller's id, as a ZooKeeper-mode Kafka broker answers).
- include_cluster_authorized_operations: 0 without DESCRIBE on the cluster, else the cluster operations the ACLs
  allow (every one without an authorizer, KIP-430); otherwise INT32_MIN.
Version notes:
- v1 endpoint_type (KIP-919): BROKER (1) is served; CONTROLLER (2) gets MISMATCHED_ENDPOINT_TYPE, any other value
  UNSUPPORTED_ENDPOINT_TYPE, with Kafka's messages. v0 requests carry no type: always BROKER.
- v2 include_fenced_brokers and is_fenced per broker (KIP-1073): fencing is KRaft's; here (one broker, or a cluster
  coordinated by ZooKeeper) a broker is registered, listed and not fenced, or gone: the list is the same either way.
"""

from __future__ import annotations

from wirebroker.apis.authorized_operations import (
    AUTHORIZED_OPERATIONS_OMITTED,
    cluster_authorized_operations,
)
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.describe_cluster import (
    DescribeClusterRequest,
    DescribeClusterResponse,
)

API_KEY = 60

ENDPOINT_TYPE_BROKER = 1
ENDPOINT_TYPE_NAMES = {1: "BROKER", 2: "CONTROLLER"}


def handle(ctx: RequestContext, request: DescribeClusterRequest) -> DescribeClusterResponse:
    if request.endpoint_type not in ENDPOINT_TYPE_NAMES:
        return _refusal(ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, f"Unsupported endpoint type {request.endpoint_type}")
    if request.endpoint_type != ENDPOINT_TYPE_BROKER:
        return _refusal(ErrorCode.MISMATCHED_ENDPOINT_TYPE,
                        "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type "
                        f"{ENDPOINT_TYPE_NAMES[request.endpoint_type]}")
    broker = ctx.broker
    view = broker.cluster_view
    return DescribeClusterResponse(
        error_code=ErrorCode.NONE,
        endpoint_type=ENDPOINT_TYPE_BROKER,
        cluster_id=broker.cluster_id,
        controller_id=view.controller_id,
        brokers=[DescribeClusterResponse.DescribeClusterBroker(broker_id=node.node_id, host=node.host, port=node.port,
                                                               rack=node.rack)
                 for node in view.alive_brokers(ctx.listener)],
        cluster_authorized_operations=(cluster_authorized_operations(ctx)
                                       if request.include_cluster_authorized_operations
                                       else AUTHORIZED_OPERATIONS_OMITTED),
    )


def _refusal(code: ErrorCode, message: str) -> DescribeClusterResponse:
    return DescribeClusterResponse(error_code=code, error_message=message)


serve(API_KEY, handle)
