"""What the group APIs share: the client host as Kafka reports it, and authorized-operation bit sets."""

from __future__ import annotations

from wirebroker.apis.context import RequestContext

AUTHORIZED_OPERATIONS_OMITTED = -(2**31)
# KIP-430 bit set for a group with no authorizer: READ, DELETE, DESCRIBE.
GROUP_OPERATIONS = sum(1 << op for op in (3, 6, 8))


def client_host(ctx: RequestContext) -> str:
    """Kafka's clientHost: the client's address without the port, after a slash ("/127.0.0.1")."""
    return "/" + ctx.client_address.rsplit(":", 1)[0].strip("[]")


def authorized_operations(requested: bool) -> int:
    return GROUP_OPERATIONS if requested else AUTHORIZED_OPERATIONS_OMITTED
