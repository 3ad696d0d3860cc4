"""Client quota entity rules (cluster/client_quotas.py) and the single node's store (cluster/client_quota_store.py)."""

from __future__ import annotations

import pytest

from wirebroker.cluster.client_quota_store import ClientQuotaStore
from wirebroker.cluster.client_quotas import (
    MATCH_TYPE_DEFAULT,
    MATCH_TYPE_EXACT,
    MATCH_TYPE_SPECIFIED,
    ClientQuotaError,
    check_alteration,
    check_filter,
    entity_from_request,
    entity_of,
    matches,
)


def test_an_entity_is_the_same_whatever_the_order_of_its_types_and_a_type_named_twice_keeps_its_last_name():
    assert entity_from_request([("user", "u"), ("client-id", "c")]) == entity_from_request([("client-id", "c"),
                                                                                            ("user", "u")])
    assert entity_from_request([("user", "u"), ("user", "v")]) == entity_of([("user", "v")])


@pytest.mark.parametrize(("pairs", "ops", "message"), [
    ([("client-id", "c")], [("request_percentage", 1.0), ("request_percentage", None)],
     ("Duplicate quota key request_percentage not updating quota for this entity "
     "ClientQuotaEntity(entries={client-id=c})")),
    ([("ip", None)], [("connection_creation_rate", -1.0)], "Quota connection_creation_rate must be greater than 0"),
    ([("ip", None)], [("connection_creation_rate", 2.5)], "connection_creation_rate cannot be a fractional value."),
    ([("user", None)], [("consumer_byte_rate", 2.0**64)], ("Proposed value for consumer_byte_rate is too large for "
                                                         "a LONG.")),
])
def test_refusals(pairs, ops, message):
    with pytest.raises(ClientQuotaError) as refused:
        check_alteration(entity_of(pairs), ops)
    assert str(refused.value) == message


def test_ip_addresses_v6_and_removals_need_no_value_check():
    check_alteration(entity_of([("ip", "::1")]), [("connection_creation_rate", 3.0), ("producer_byte_rate", None)])


def test_filters_match_as_kafkas_image():
    alice, alice_app, default_client = (entity_of([("user", "alice")]),
                                        entity_of([("user", "alice"), ("client-id", "app")]),
                                        entity_of([("client-id", None)]))
    exact, specified = check_filter([("user", MATCH_TYPE_EXACT, "alice")])
    assert [matches(e, exact, specified, False) for e in (alice, alice_app, default_client)] == [True, True, False]
    assert [matches(e, exact, specified, True) for e in (alice, alice_app, default_client)] == [True, False, False]
    exact, specified = check_filter([("client-id", MATCH_TYPE_DEFAULT, None)])
    assert [matches(e, exact, specified, False) for e in (alice, alice_app, default_client)] == [False, False, True]
    exact, specified = check_filter([("client-id", MATCH_TYPE_SPECIFIED, None)])
    assert [matches(e, exact, specified, False) for e in (alice, alice_app, default_client)] == [False, True, True]
    assert [matches(e, {}, set(), True) for e in (alice, alice_app, default_client)] == [False, False, False]
    with pytest.raises(ClientQuotaError) as refused:
        check_filter([("group", MATCH_TYPE_SPECIFIED, None)])
    assert refused.value.code_name == "UNSUPPORTED_VERSION"


def test_the_store_keeps_quotas_across_a_restart_and_tells_its_listeners(tmp_path):
    store = ClientQuotaStore(tmp_path)
    assert store.quotas() == {} and not store.path.exists()  # nothing written until a quota is set
    told = []
    store.listeners.append(told.append)
    user = entity_of([("user", None)])
    store.alter({user: {"producer_byte_rate": 5.0, "consumer_byte_rate": 6.0}})
    store.alter({user: {"consumer_byte_rate": None}})
    assert ClientQuotaStore(tmp_path).quotas() == {user: {"producer_byte_rate": 5.0}}
    assert told[-1] == {user: {"producer_byte_rate": 5.0}}
    store.alter({user: {"producer_byte_rate": None}})
    assert ClientQuotaStore(tmp_path).quotas() == {}
