"""The client's host as Kafka reports it in group membership (JoinGroup, ConsumerGroupHeartbeat, describes)."""

from __future__ import annotations

from wirebroker.apis.context import RequestContext


def client_host(ctx: RequestContext) -> str:
    """Kafka's clientHost: the client's address without the port, after a slash ("/127.0.0.1")."""
    return "/" + ctx.client_ip
