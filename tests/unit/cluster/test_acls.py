"""ACL bindings: Kafka's filter matching (ResourcePatternFilter, AccessControlEntryFilter), the checks before a
binding is stored, and the store's persistence."""

from __future__ import annotations

import json

import pytest

from wirebroker.cluster.acls import (
    ACLS_FILE,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AclStore,
    PatternType,
    ResourceType,
    validate_filter,
    validate_new_binding,
)
from wirebroker.protocol.errors import InvalidRequestError

ANY_ENTRY = dict(principal=None, host=None, operation=AclOperation.ANY, permission_type=AclPermissionType.ANY)


def binding(name: str = "orders", pattern: PatternType = PatternType.LITERAL,
            resource: ResourceType = ResourceType.TOPIC, principal: str = "User:alice", host: str = "*",
            operation: AclOperation = AclOperation.READ,
            permission: AclPermissionType = AclPermissionType.ALLOW) -> AclBinding:
    return AclBinding(resource, name, pattern, principal, host, operation, permission)


def pattern_filter(name: str | None, pattern: PatternType, resource: ResourceType = ResourceType.TOPIC,
                   **entry: object) -> AclBindingFilter:
    return AclBindingFilter(resource, name, pattern, **{**ANY_ENTRY, **entry})


LITERAL_ORDERS = binding("orders")
WILDCARD = binding("*")
PREFIX_ORD = binding("ord", PatternType.PREFIXED)
PREFIX_OTHER = binding("pay", PatternType.PREFIXED)
LITERAL_ORD = binding("ord")
ALL = (LITERAL_ORDERS, WILDCARD, PREFIX_ORD, PREFIX_OTHER, LITERAL_ORD)


@pytest.mark.parametrize(("binding_filter", "matched"), [
    # MATCH: every pattern that applies to the name: the literal, the wildcard, the prefixes of it.
    (pattern_filter("orders", PatternType.MATCH), {LITERAL_ORDERS, WILDCARD, PREFIX_ORD}),
    # ANY and a specific type compare names exactly.
    (pattern_filter("orders", PatternType.ANY), {LITERAL_ORDERS}),
    (pattern_filter("ord", PatternType.ANY), {PREFIX_ORD, LITERAL_ORD}),
    (pattern_filter("ord", PatternType.PREFIXED), {PREFIX_ORD}),
    (pattern_filter("*", PatternType.LITERAL), {WILDCARD}),
    (pattern_filter(None, PatternType.PREFIXED), {PREFIX_ORD, PREFIX_OTHER}),
    (pattern_filter(None, PatternType.ANY), set(ALL)),
    (pattern_filter(None, PatternType.ANY, ResourceType.GROUP), set()),
    (pattern_filter(None, PatternType.ANY, ResourceType.ANY), set(ALL)),
])
def test_resource_pattern_filters_match_as_kafka(binding_filter, matched):
    assert {b for b in ALL if binding_filter.matches(b)} == matched


@pytest.mark.parametrize(("entry", "matches"), [
    (dict(principal="User:alice"), True),
    (dict(principal="*"), False),  # no wildcard in filters: "*" matches only a binding for "*"
    (dict(host="*"), True),
    (dict(host="10.0.0.1"), False),
    (dict(operation=AclOperation.READ), True),
    (dict(operation=AclOperation.ALL), False),
    (dict(permission_type=AclPermissionType.DENY), False),
    (dict(operation=AclOperation.UNKNOWN), False),
])
def test_entry_filters_match_exactly_or_any(entry, matches):
    assert pattern_filter(None, PatternType.ANY, **entry).matches(LITERAL_ORDERS) is matches


@pytest.mark.parametrize(("bad", "message"), [
    (binding("other", resource=ResourceType.CLUSTER), "The only valid name for the CLUSTER resource is kafka-cluster"),
    (binding(""), "Invalid empty resource name"),
    (binding(resource=ResourceType.UNKNOWN), "Invalid resourceType UNKNOWN"),
    (binding(resource=ResourceType.ANY), "Invalid resourceType ANY"),
    (binding(pattern=PatternType.MATCH), "Invalid patternType MATCH"),
    (binding(operation=AclOperation.ANY), "Invalid operation ANY"),
    (binding(permission=AclPermissionType.UNKNOWN), "Invalid permissionType UNKNOWN"),
])
def test_new_bindings_are_checked_with_kafkas_messages(bad, message):
    with pytest.raises(InvalidRequestError, match=f"^{message}$"):
        validate_new_binding(bad)


def test_a_cluster_binding_names_kafka_cluster():
    validate_new_binding(binding("kafka-cluster", resource=ResourceType.CLUSTER, operation=AclOperation.ALTER))


def test_a_code_kafka_does_not_know_reads_as_unknown_and_a_filter_with_it_is_refused():
    assert ResourceType(99) is ResourceType.UNKNOWN and AclOperation(-3) is AclOperation.UNKNOWN
    with pytest.raises(InvalidRequestError, match="^Unknown patternFilter.$"):
        validate_filter(pattern_filter(None, PatternType(42)))
    with pytest.raises(InvalidRequestError, match="^Unknown entryFilter.$"):
        validate_filter(pattern_filter(None, PatternType.ANY, permission_type=AclPermissionType(7)))
    validate_filter(pattern_filter(None, PatternType.ANY))


def test_store_keeps_each_binding_once_in_creation_order_across_restarts(tmp_path):
    store = AclStore(tmp_path)
    assert store.bindings() == () and not (tmp_path / ACLS_FILE).exists()
    store.create([LITERAL_ORDERS, PREFIX_ORD])
    store.create([PREFIX_ORD, WILDCARD])  # creating an existing binding changes nothing
    assert store.bindings() == (LITERAL_ORDERS, PREFIX_ORD, WILDCARD)
    saved = json.loads((tmp_path / ACLS_FILE).read_text())
    assert saved["acls"][1] == {"resource_type": "TOPIC", "resource_name": "ord", "pattern_type": "PREFIXED",
                                "principal": "User:alice", "host": "*", "operation": "READ",
                                "permission_type": "ALLOW"}
    assert AclStore(tmp_path).bindings() == (LITERAL_ORDERS, PREFIX_ORD, WILDCARD)
    assert store.describe(pattern_filter("orders", PatternType.MATCH)) == [LITERAL_ORDERS, PREFIX_ORD, WILDCARD]


def test_delete_lists_per_filter_what_it_matched_and_deletes_all_at_once(tmp_path):
    store = AclStore(tmp_path)
    store.create(ALL)
    matched = store.delete([pattern_filter("orders", PatternType.MATCH), pattern_filter("ord", PatternType.ANY),
                            pattern_filter("nothing", PatternType.LITERAL)])
    assert matched == [[LITERAL_ORDERS, WILDCARD, PREFIX_ORD], [PREFIX_ORD, LITERAL_ORD], []]
    assert store.bindings() == (PREFIX_OTHER,)
    assert AclStore(tmp_path).bindings() == (PREFIX_OTHER,)
