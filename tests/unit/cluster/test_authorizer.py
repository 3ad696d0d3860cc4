"""The authorizer's rules, each as Kafka's StandardAuthorizer answers it (its StandardAuthorizerTest cases)."""

from __future__ import annotations

import pytest

from wirebroker.cluster.acls import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AclStore,
    PatternType,
    ResourceType,
)
from wirebroker.cluster.authorizer import Authorizer, UnknownAuthorizerError

ALICE, BOB = "User:alice", "User:bob"
HOST = "10.0.0.1"
OP, TYPE, PATTERN, PERMISSION = AclOperation, ResourceType, PatternType, AclPermissionType


def binding(name: str = "orders", operation: AclOperation = OP.READ, permission: AclPermissionType = PERMISSION.ALLOW,
            principal: str = ALICE, pattern: PatternType = PATTERN.LITERAL, resource_type: ResourceType = TYPE.TOPIC,
            host: str = "*") -> AclBinding:
    return AclBinding(resource_type, name, pattern, principal, host, operation, permission)


def authorizer(tmp_path, *bindings: AclBinding, super_users: str | None = None,
               allow_everyone: bool = False) -> Authorizer:
    tmp_path.mkdir(exist_ok=True)
    store = AclStore(tmp_path)
    store.create(bindings)
    return Authorizer.from_config("org.apache.kafka.metadata.authorizer.StandardAuthorizer", super_users,
                                  allow_everyone, store)


def may(auth: Authorizer, operation: AclOperation, name: str = "orders", principal: str = ALICE,
        resource_type: ResourceType = TYPE.TOPIC, host: str = HOST) -> bool:
    return auth.authorize(principal, host, operation, resource_type, name)


def test_a_resource_without_acls_is_closed_unless_everyone_is_allowed(tmp_path):
    assert not may(authorizer(tmp_path), OP.READ)
    assert may(authorizer(tmp_path / "open", allow_everyone=True), OP.READ)


def test_an_acl_for_someone_else_closes_the_resource_even_when_everyone_is_allowed(tmp_path):
    auth = authorizer(tmp_path, binding(principal=BOB), allow_everyone=True)
    assert not may(auth, OP.READ)
    assert may(auth, OP.READ, principal=BOB)
    assert may(auth, OP.READ, name="payments")  # no ACL there


def test_super_users_may_do_everything_even_against_a_deny(tmp_path):
    auth = authorizer(tmp_path, binding(principal="User:*", operation=OP.ALL, permission=PERMISSION.DENY),
                      super_users="User:admin; User:ops")
    assert may(auth, OP.DELETE, principal="User:ops")
    assert not may(auth, OP.READ)


@pytest.mark.parametrize("granted", [OP.READ, OP.WRITE, OP.DELETE, OP.ALTER, OP.DESCRIBE, OP.ALL])
def test_describe_is_implied_by_read_write_delete_alter(tmp_path, granted):
    assert may(authorizer(tmp_path, binding(operation=granted)), OP.DESCRIBE)


@pytest.mark.parametrize("granted", [OP.CREATE, OP.DESCRIBE_CONFIGS, OP.ALTER_CONFIGS])
def test_describe_is_not_implied_by_the_others(tmp_path, granted):
    assert not may(authorizer(tmp_path, binding(operation=granted)), OP.DESCRIBE)


def test_describe_configs_is_implied_by_alter_configs_and_nothing_else_is(tmp_path):
    auth = authorizer(tmp_path, binding(operation=OP.ALTER_CONFIGS))
    assert may(auth, OP.DESCRIBE_CONFIGS)
    assert not may(auth, OP.DESCRIBE)
    assert not may(auth, OP.READ)
    assert not may(authorizer(tmp_path / "write", binding(operation=OP.WRITE)), OP.READ)


def test_a_deny_of_read_does_not_deny_describe(tmp_path):
    auth = authorizer(tmp_path, binding(operation=OP.ALL), binding(operation=OP.READ, permission=PERMISSION.DENY))
    assert not may(auth, OP.READ)
    assert may(auth, OP.DESCRIBE)
    assert may(auth, OP.WRITE)


def test_deny_wins_over_allow_whatever_the_pattern(tmp_path):
    auth = authorizer(tmp_path, binding(name="*", operation=OP.ALL),
                      binding(name="ord", pattern=PATTERN.PREFIXED, operation=OP.WRITE, permission=PERMISSION.DENY))
    assert not may(auth, OP.WRITE)
    assert may(auth, OP.WRITE, name="payments")
    assert may(auth, OP.READ)


def test_literal_prefixed_and_wildcard_names(tmp_path):
    auth = authorizer(tmp_path, binding(name="orders"), binding(name="pay", pattern=PATTERN.PREFIXED),
                      binding(name="*", operation=OP.WRITE))
    assert may(auth, OP.READ, name="orders")
    assert not may(auth, OP.READ, name="orders-2")
    assert may(auth, OP.READ, name="payments")
    assert not may(auth, OP.READ, name="pa")
    assert may(auth, OP.WRITE, name="anything")
    # "*" is a plain name to a PREFIXED pattern, and a PREFIXED "*" matches only names starting with "*"
    assert not may(authorizer(tmp_path / "p", binding(name="*", pattern=PATTERN.PREFIXED)), OP.READ)


def test_wildcard_principal_and_host(tmp_path):
    auth = authorizer(tmp_path, binding(principal="User:*", host=HOST))
    assert may(auth, OP.READ, principal=BOB)
    assert not may(auth, OP.READ, principal=BOB, host="10.0.0.2")


def test_resource_types_do_not_mix(tmp_path):
    auth = authorizer(tmp_path, binding(resource_type=TYPE.GROUP, name="orders"))
    assert may(auth, OP.READ, resource_type=TYPE.GROUP)
    assert not may(auth, OP.READ)


def test_authorize_by_resource_type(tmp_path):
    by_type = lambda auth, principal=ALICE: auth.authorize_by_resource_type(principal, HOST, OP.WRITE, TYPE.TOPIC)
    assert not by_type(authorizer(tmp_path / "none"))
    assert by_type(authorizer(tmp_path / "open", allow_everyone=True))
    assert by_type(authorizer(tmp_path / "lit", binding(operation=OP.WRITE)))
    assert not by_type(authorizer(tmp_path / "read", binding(operation=OP.READ)))
    denied_literal = authorizer(tmp_path / "dl", binding(operation=OP.WRITE),
                                binding(operation=OP.WRITE, permission=PERMISSION.DENY))
    assert not by_type(denied_literal)
    dominated = authorizer(tmp_path / "dp", binding(name="orders", pattern=PATTERN.PREFIXED, operation=OP.WRITE),
                           binding(name="or", pattern=PATTERN.PREFIXED, operation=OP.WRITE,
                                   permission=PERMISSION.DENY))
    assert not by_type(dominated)
    assert by_type(authorizer(tmp_path / "su", super_users="User:alice"))
    wildcard_deny = authorizer(tmp_path / "wd", binding(operation=OP.WRITE),
                               binding(name="*", operation=OP.WRITE, permission=PERMISSION.DENY))
    assert not by_type(wildcard_deny)


def test_a_new_acl_is_enforced_at_once(tmp_path):
    store = AclStore(tmp_path)
    auth = Authorizer(store, (), allow_everyone_if_no_acl_found=False)
    assert not may(auth, OP.READ)
    store.create([binding()])
    assert may(auth, OP.READ)


def test_an_unknown_class_name_is_refused():
    with pytest.raises(UnknownAuthorizerError, match="com.example.MyAuthorizer"):
        Authorizer.from_config("com.example.MyAuthorizer", None, False, None)  # type: ignore[arg-type]
