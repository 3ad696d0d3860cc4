"""What the three ACL APIs share (Kafka's AclApis and the ACL request classes): whether an authorizer is configured,
the filter a DescribeAcls or DeleteAcls request names, and the refusal of requests that name UNKNOWN.

The bindings are enforced by the authorizer (cluster/authorizer.py); these APIs need DESCRIBE (listing) or ALTER
(creating, deleting) on the cluster.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from wirebroker.apis.context import RequestContext
from wirebroker.cluster.acls import (
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from wirebroker.protocol.errors import KafkaError

T = TypeVar("T")

NO_AUTHORIZER = "No Authorizer is configured."
UNKNOWN_CODE = 0  # the UNKNOWN of every ACL enum


def authorizer_configured(ctx: RequestContext) -> bool:
    """Kafka answers the ACL APIs with SECURITY_DISABLED unless `authorizer.class.name` names an authorizer."""
    return bool(ctx.broker.config["authorizer.class.name"])


def names_unknown(*codes: int) -> bool:
    """Whether a request names an enum's UNKNOWN: Kafka refuses such a request while parsing it (its
    normalizeAndValidate / validate) and closes the connection without an answer. A code it does not know is not
    refused there: it reads as UNKNOWN later, as in Kafka's fromCode."""
    return UNKNOWN_CODE in codes


def filter_codes(fields: Any) -> tuple[int, int, int, int]:
    """The enum codes of a DescribeAcls request or a DeleteAcls filter."""
    return fields.resource_type_filter, fields.pattern_type_filter, fields.operation, fields.permission_type


def binding_filter(fields: Any) -> AclBindingFilter:
    """The filter a DescribeAcls request or a DeleteAcls filter names (their fields are named alike)."""
    return AclBindingFilter(*typed(fields.resource_type_filter, fields.resource_name_filter, fields.pattern_type_filter,
                                   fields.principal_filter, fields.host_filter, fields.operation,
                                   fields.permission_type))


def typed(resource_type: int, resource_name: str | None, pattern_type: int, principal: str | None,
          host: str | None, operation: int, permission_type: int) -> tuple[Any, ...]:
    """The seven fields of a binding or a filter, in their order, with Kafka's enums in place of the codes."""
    return (ResourceType(resource_type), resource_name, PatternType(pattern_type), principal, host,
            AclOperation(operation), AclPermissionType(permission_type))


def error_of(check: Callable[[T], None], value: T) -> KafkaError | None:
    """The Kafka error `check` raises for `value`, or None when it passes: one result per creation or filter."""
    try:
        check(value)
    except KafkaError as exc:
        return exc
    return None
