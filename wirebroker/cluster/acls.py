"""The cluster's ACL bindings (Kafka's AclControlManager and the ACL set of its StandardAuthorizer), kept on disk.

Bindings are created, described and deleted (CreateAcls, DescribeAcls, DeleteAcls) and matched by filters exactly as
Kafka matches them (ResourcePatternFilter, AccessControlEntryFilter); with `authorizer.class.name` the authorizer
(cluster/authorizer.py) checks every request against them, reading them here at each question. A single node
keeps them in a file; a ZooKeeper cluster keeps them where Kafka's AclAuthorizer does, for every broker
(cluster/zk/acls.py, the same interface).

File `<first log dir>/acls.json`, rewritten atomically (temporary file, fsync, rename) on every change, bindings in
creation order, each enum by its Kafka name (Kafka's AccessControlEntryRecord carries the same seven fields):

    {"version": 1, "acls": [{"resource_type": "TOPIC", "resource_name": "orders", "pattern_type": "LITERAL",
                             "principal": "User:alice", "host": "*", "operation": "READ",
                             "permission_type": "ALLOW"}]}
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from wirebroker.log.checkpoints import write_file_atomically
from wirebroker.protocol.errors import InvalidRequestError

ACLS_FILE = "acls.json"
FILE_VERSION = 1
CLUSTER_RESOURCE_NAME = "kafka-cluster"  # Kafka's Resource.CLUSTER_NAME: the only name a CLUSTER binding may carry
WILDCARD_RESOURCE = "*"  # a LITERAL name that stands for every resource of its type


class _Coded(enum.IntEnum):
    """Kafka's ACL enums: a code Kafka does not know reads as UNKNOWN (their fromCode)."""

    @classmethod
    def _missing_(cls, value: object) -> _Coded:
        return cls["UNKNOWN"]


class ResourceType(_Coded):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(_Coded):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2  # filters only: the patterns that would apply to the filter's name
    LITERAL = 3
    PREFIXED = 4


class AclOperation(_Coded):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(_Coded):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


@dataclass(frozen=True, slots=True)
class AclBinding:
    """A resource pattern with an access control entry (Kafka's AclBinding / StandardAcl)."""

    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    """What DescribeAcls and DeleteAcls select; a None name, principal or host matches any."""

    resource_type: ResourceType
    resource_name: str | None
    pattern_type: PatternType
    principal: str | None
    host: str | None
    operation: AclOperation
    permission_type: AclPermissionType

    def matches(self, binding: AclBinding) -> bool:
        return self._matches_pattern(binding) and self._matches_entry(binding)

    def _matches_pattern(self, binding: AclBinding) -> bool:
        """Kafka's ResourcePatternFilter.matches."""
        if self.resource_type not in (ResourceType.ANY, binding.resource_type):
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH, binding.pattern_type):
            return False
        if self.resource_name is None:
            return True
        if self.pattern_type in (PatternType.ANY, binding.pattern_type):
            return self.resource_name == binding.resource_name
        # MATCH: the patterns that apply to this name.
        if binding.pattern_type is PatternType.LITERAL:
            return binding.resource_name in (self.resource_name, WILDCARD_RESOURCE)
        return self.resource_name.startswith(binding.resource_name)

    def _matches_entry(self, binding: AclBinding) -> bool:
        """Kafka's AccessControlEntryFilter.matches."""
        return ((self.principal is None or self.principal == binding.principal)
                and (self.host is None or self.host == binding.host)
                and self.operation in (AclOperation.ANY, binding.operation)
                and self.permission_type in (AclPermissionType.ANY, binding.permission_type))


def validate_new_binding(binding: AclBinding) -> None:
    """The checks a binding passes before it is stored (Kafka's AclApis, then AclControlManager.validateNewAcl)."""
    if binding.resource_type is ResourceType.CLUSTER and binding.resource_name != CLUSTER_RESOURCE_NAME:
        raise InvalidRequestError(f"The only valid name for the CLUSTER resource is {CLUSTER_RESOURCE_NAME}")
    if not binding.resource_name:
        raise InvalidRequestError("Invalid empty resource name")
    if binding.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        raise InvalidRequestError(f"Invalid resourceType {binding.resource_type.name}")
    if binding.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        raise InvalidRequestError(f"Invalid patternType {binding.pattern_type.name}")
    if binding.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        raise InvalidRequestError(f"Invalid operation {binding.operation.name}")
    if binding.permission_type not in (AclPermissionType.DENY, AclPermissionType.ALLOW):
        raise InvalidRequestError(f"Invalid permissionType {binding.permission_type.name}")


def validate_filter(binding_filter: AclBindingFilter) -> None:
    """Kafka's AclControlManager.validateFilter: a filter with an UNKNOWN part deletes nothing and is refused."""
    if binding_filter.resource_type is ResourceType.UNKNOWN or binding_filter.pattern_type is PatternType.UNKNOWN:
        raise InvalidRequestError("Unknown patternFilter.")
    if binding_filter.operation is AclOperation.UNKNOWN or binding_filter.permission_type is AclPermissionType.UNKNOWN:
        raise InvalidRequestError("Unknown entryFilter.")


class AclSnapshot:
    """What every ACL store answers from: an immutable tuple of bindings, replaced whole on every change, so reads
    take no lock (the authorizer on every request, DescribeAcls)."""

    _bindings: tuple[AclBinding, ...] = ()

    def bindings(self) -> tuple[AclBinding, ...]:
        return self._bindings

    def describe(self, binding_filter: AclBindingFilter) -> list[AclBinding]:
        return [b for b in self._bindings if binding_filter.matches(b)]

    def validate(self, binding: AclBinding) -> None:
        """Raise InvalidRequestError unless the binding may be stored (CreateAcls, per binding)."""
        validate_new_binding(binding)


class AclStore(AclSnapshot):
    """The bindings, in creation order, each once; persisted on every change."""

    def __init__(self, log_dir: Path) -> None:
        self.path = log_dir / ACLS_FILE
        self._lock = threading.Lock()
        self._bindings = self._load()

    def create(self, bindings: Iterable[AclBinding]) -> None:
        """Store each binding not stored yet (creating an existing binding succeeds and changes nothing)."""
        with self._lock:
            kept = dict.fromkeys(self._bindings)
            kept.update(dict.fromkeys(bindings))
            self._publish(tuple(kept))

    def delete(self, filters: Sequence[AclBindingFilter]) -> list[list[AclBinding]]:
        """Delete every binding some filter matches; per filter, the bindings it matched. A binding two filters
        match is listed under both, as Kafka lists it."""
        with self._lock:
            matched = [[b for b in self._bindings if f.matches(b)] for f in filters]
            gone = {b for bindings in matched for b in bindings}
            if gone:
                self._publish(tuple(b for b in self._bindings if b not in gone))
            return matched

    def _publish(self, bindings: tuple[AclBinding, ...]) -> None:
        if bindings == self._bindings:
            return
        state = {"version": FILE_VERSION, "acls": [_to_json(b) for b in bindings]}
        write_file_atomically(os.fspath(self.path), json.dumps(state, indent=1))
        self._bindings = bindings

    def _load(self) -> tuple[AclBinding, ...]:
        if not self.path.exists():
            return ()
        state = json.loads(self.path.read_text())
        return tuple(_from_json(entry) for entry in state["acls"])


_ENUM_FIELDS = {"resource_type": ResourceType, "pattern_type": PatternType, "operation": AclOperation,
                "permission_type": AclPermissionType}


def _to_json(binding: AclBinding) -> dict[str, str]:
    return {f.name: getattr(binding, f.name).name if f.name in _ENUM_FIELDS else getattr(binding, f.name)
            for f in dataclasses.fields(binding)}


def _from_json(entry: dict[str, str]) -> AclBinding:
    return AclBinding(**{key: _ENUM_FIELDS[key][value] if key in _ENUM_FIELDS else value
                         for key, value in entry.items()})
