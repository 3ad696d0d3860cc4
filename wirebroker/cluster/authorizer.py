"""Kafka's StandardAuthorizer over the stored ACL bindings (cluster/acls.py): may this principal do that?

Loaded only when `authorizer.class.name` names one of Kafka's authorizers (AUTHORIZER_CLASS_NAMES); without it
nothing is checked and this module is never imported. It lives beside the ACL store, as Kafka's StandardAuthorizer
lives in its metadata module beside the AclControlManager.

The rules, as StandardAuthorizerData.authorize / findResult apply them:
- A principal listed in `super.users` ("User:admin;User:ops") may do everything.
- The bindings that apply to a resource are those of its type whose pattern is LITERAL with its name or "*", or
  PREFIXED with a prefix of its name. A binding matches the request when its principal is the request's or
  "User:*", its host is "*" or the client's address, and its operation is the requested one or ALL. An ALLOW for
  READ, WRITE, DELETE or ALTER also allows DESCRIBE, an ALLOW for ALTER_CONFIGS also DESCRIBE_CONFIGS; a DENY
  denies only its own operation (or ALL).
- A matching DENY wins over every ALLOW; a matching ALLOW allows.
- When no binding matches: denied if the resource has bindings for anyone else, otherwise
  `allow.everyone.if.no.acl.found` decides (false by default, so a resource with no ACL is closed).

Authorizing by resource type (InitProducerId without a transactional id asks whether the principal may WRITE to
some topic) follows Kafka's Authorizer.authorizeByResourceType.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from wirebroker.cluster.acls import (
    WILDCARD_RESOURCE,
    AclBinding,
    AclOperation,
    AclPermissionType,
    AclSnapshot,
    PatternType,
    ResourceType,
)
from wirebroker.protocol.messages import API_SPECS

# Kafka's name for its audit log: operators grep for it.
log = logging.getLogger("wirebroker.authorizer")

# The class names a Kafka server.properties carries for its ACL authorizers (KRaft's and ZooKeeper mode's).
AUTHORIZER_CLASS_NAMES = frozenset({
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "kafka.security.authorizer.AclAuthorizer",
})
WILDCARD_PRINCIPAL = "User:*"
WILDCARD_HOST = "*"
# An ALLOW binding for one of these operations allows DESCRIBE (or DESCRIBE_CONFIGS) too: Kafka's IMPLIES_DESCRIBE.
IMPLIES_DESCRIBE = frozenset({AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE,
                              AclOperation.ALTER})
IMPLIES_DESCRIBE_CONFIGS = frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS})
# Authorizer.authorizeByResourceType first asks about this made-up name so that super users (and ACLs matching
# every name) answer before any DENY is weighed.
_ANY_NAME = "hardcode"


class UnknownAuthorizerError(ValueError):
    """`authorizer.class.name` names a class this broker does not provide (Kafka fails to start the same way)."""


class Authorizer:
    """Answers one question per resource; the bindings are read from the ACL store at every question, indexed by
    resource type once per change of the store."""

    def __init__(self, acls: AclSnapshot, super_users: Iterable[str], allow_everyone_if_no_acl_found: bool) -> None:
        self._acls = acls
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found
        self._index: tuple[tuple[AclBinding, ...], dict[ResourceType, tuple[AclBinding, ...]]] = ((), {})

    @classmethod
    def from_config(cls, class_name: str, super_users: str | None, allow_everyone_if_no_acl_found: bool,
                    acls: AclSnapshot) -> Authorizer:
        if class_name not in AUTHORIZER_CLASS_NAMES:
            raise UnknownAuthorizerError(
                f"authorizer.class.name={class_name} is not an authorizer this broker provides; "
                f"use one of {', '.join(sorted(AUTHORIZER_CLASS_NAMES))}")
        names = [name.strip() for name in (super_users or "").split(";") if name.strip()]
        return cls(acls, names, allow_everyone_if_no_acl_found)

    def authorize(self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType,
                  name: str) -> bool:
        """May `principal` ("User:alice"), from `host` (the client's address), do `operation` to the resource?"""
        if principal in self.super_users:
            return True
        found_any = False
        allowed = False
        for binding in self._bindings_of(resource_type):
            if not _pattern_applies(binding, name):
                continue
            found_any = True
            verdict = _verdict(binding, principal, host, operation)
            if verdict is AclPermissionType.DENY:
                return False
            allowed = allowed or verdict is AclPermissionType.ALLOW
        return allowed or (not found_any and self.allow_everyone_if_no_acl_found)

    def authorize_by_resource_type(self, principal: str, host: str, operation: AclOperation,
                                   resource_type: ResourceType) -> bool:
        """Whether some resource of the type is open to the operation (Kafka's authorizeByResourceType): an ALLOW
        binding that no DENY dominates (a DENY on the same literal name, or on a prefix of it)."""
        if self.authorize(principal, host, operation, resource_type, _ANY_NAME):
            return True
        denied: dict[PatternType, set[str]] = {PatternType.LITERAL: set(), PatternType.PREFIXED: set()}
        allowed: dict[PatternType, set[str]] = {PatternType.LITERAL: set(), PatternType.PREFIXED: set()}
        for binding in self._bindings_of(resource_type):
            if (binding.host not in (WILDCARD_HOST, host)
                    or binding.principal not in (principal, WILDCARD_PRINCIPAL)
                    or binding.operation not in (operation, AclOperation.ALL)):
                continue
            if binding.permission_type is AclPermissionType.DENY:
                if binding.pattern_type is PatternType.LITERAL and binding.resource_name == WILDCARD_RESOURCE:
                    return False
                denied[binding.pattern_type].add(binding.resource_name)
            elif binding.permission_type is AclPermissionType.ALLOW:
                if binding.pattern_type is PatternType.LITERAL and binding.resource_name == WILDCARD_RESOURCE:
                    return True
                allowed[binding.pattern_type].add(binding.resource_name)
        for pattern_type, names in allowed.items():
            for name in names:
                if pattern_type is PatternType.LITERAL and name in denied[PatternType.LITERAL]:
                    continue
                if not any(name[:end] in denied[PatternType.PREFIXED] for end in range(1, len(name) + 1)):
                    return True
        return False

    def _bindings_of(self, resource_type: ResourceType) -> tuple[AclBinding, ...]:
        bindings = self._acls.bindings()
        indexed_for, index = self._index
        if indexed_for is not bindings:
            grouped: dict[ResourceType, list[AclBinding]] = {}
            for binding in bindings:
                grouped.setdefault(binding.resource_type, []).append(binding)
            index = {key: tuple(value) for key, value in grouped.items()}
            self._index = (bindings, index)  # one assignment: a reader on another thread sees old or new, whole
        return index.get(resource_type, ())

    @staticmethod
    def log_denied(principal: str, host: str, operation: AclOperation, resource_type: ResourceType, name: str,
                   api_key: int) -> None:
        """The line Kafka's kafka.authorizer.logger writes for a refusal, so operators see who was refused what
        (and which ACL to add)."""
        log.info("Principal = %s is Denied operation = %s from host = %s on resource = %s:%s for request = %s",
                 principal, operation.name, host, resource_type.name, name, API_SPECS[api_key].name)


def _pattern_applies(binding: AclBinding, name: str) -> bool:
    if binding.pattern_type is PatternType.LITERAL:
        return binding.resource_name in (name, WILDCARD_RESOURCE)
    return binding.pattern_type is PatternType.PREFIXED and name.startswith(binding.resource_name)


def _verdict(binding: AclBinding, principal: str, host: str, operation: AclOperation) -> AclPermissionType | None:
    """Kafka's findResult: ALLOW or DENY when the binding matches the request, None when it does not."""
    if binding.principal not in (principal, WILDCARD_PRINCIPAL):
        return None
    if binding.host not in (WILDCARD_HOST, host):
        return None
    if binding.operation is not AclOperation.ALL:
        if binding.permission_type is AclPermissionType.ALLOW and operation is AclOperation.DESCRIBE:
            if binding.operation not in IMPLIES_DESCRIBE:
                return None
        elif binding.permission_type is AclPermissionType.ALLOW and operation is AclOperation.DESCRIBE_CONFIGS:
            if binding.operation not in IMPLIES_DESCRIBE_CONFIGS:
                return None
        elif binding.operation is not operation:
            return None
    return binding.permission_type
