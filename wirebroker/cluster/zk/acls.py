"""ACL bindings in ZooKeeper, where Kafka's ZooKeeper-mode AclAuthorizer keeps them (kafka.zk.ZkData's ZkAclStore),
so that every broker of a cluster enforces every binding, and Kafka's own tools reading ZooKeeper see the same ones:

    /kafka-acl/<ResourceType>/<name>                   LITERAL patterns of a resource
    /kafka-acl-extended/prefixed/<ResourceType>/<name> PREFIXED patterns
        {"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}
    /kafka-acl-changes/acl_changes_<seq>               "TOPIC:orders" after a LITERAL resource's node changed
    /kafka-acl-extended-changes/acl_changes_<seq>      {"version":1,"resourceType":"TOPIC","name":"orders-",
                                                        "patternType":"PREFIXED"} after a PREFIXED one changed

Resource types, operations and permissions are spelt in Kafka's PascalCase (SecurityUtils: "TransactionalId",
"IdempotentWrite", "Allow"). A change reads the resource's node, changes its entries and writes it back only if
its znode version is unchanged (read again and retry when another broker wrote it meanwhile), deletes the node when
no entry is left, then creates the change notification. Every broker watches both change paths and re-reads the
resource each notification names (cluster/zk/change_notifications.py); at start-up it reads every node after
starting those watches, as AclAuthorizer.configure does, so no change falls between the two. The interface is the
single node's AclStore (cluster/acls.py): the authorizer reads `bindings()`, an immutable snapshot.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Sequence

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from wirebroker.cluster.acls import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AclSnapshot,
    PatternType,
    ResourceType,
)
from wirebroker.cluster.zk.change_notifications import (
    ChangeNotificationListener,
    notify,
)
from wirebroker.protocol.errors import InvalidRequestError

log = logging.getLogger(__name__)

LITERAL_ACLS = "/kafka-acl"
PREFIXED_ACLS = "/kafka-acl-extended/prefixed"
LITERAL_ACL_CHANGES = "/kafka-acl-changes"
EXTENDED_ACL_CHANGES = "/kafka-acl-extended-changes"
ACL_CHANGE_PREFIX = "acl_changes_"
ACLS_VERSION = 1  # Kafka's AclEntry.CurrentVersion
CHANGE_EVENT_VERSION = 1  # Kafka's ExtendedAclChangeEvent.currentVersion
ROOTS = {PatternType.LITERAL: LITERAL_ACLS, PatternType.PREFIXED: PREFIXED_ACLS}

Resource = tuple[ResourceType, str, PatternType]  # Kafka's ResourcePattern
Entries = tuple[AclBinding, ...]


def _pascal(name: str) -> str:
    """Kafka's SecurityUtils.toPascalCase: TRANSACTIONAL_ID -> TransactionalId."""
    return "".join(word.capitalize() for word in name.split("_"))


_RESOURCE_TYPES = {_pascal(t.name): t for t in ResourceType if t not in (ResourceType.UNKNOWN, ResourceType.ANY)}
_OPERATIONS = {_pascal(o.name): o for o in AclOperation}


def resource_path(resource: Resource) -> str:
    resource_type, name, pattern_type = resource
    return f"{ROOTS[pattern_type]}/{_pascal(resource_type.name)}/{name}"


def encode_acls(entries: Entries) -> bytes:
    """Kafka's ResourceZNode.encode (AclEntry.toJsonCompatibleMap)."""
    return json.dumps({"version": ACLS_VERSION, "acls": [
        {"principal": b.principal, "permissionType": _pascal(b.permission_type.name),
         "operation": _pascal(b.operation.name), "host": b.host} for b in entries]}, separators=(",", ":")).encode()


def decode_acls(resource: Resource, data: bytes | None) -> Entries:
    """Kafka's AclEntry.fromBytes: the resource's entries as bindings (an empty node has none)."""
    if not data:
        return ()
    resource_type, name, pattern_type = resource
    return tuple(AclBinding(resource_type, name, pattern_type, acl["principal"], acl["host"],
                            _OPERATIONS.get(acl["operation"], AclOperation.UNKNOWN),
                            AclPermissionType[acl["permissionType"].upper()])
                 for acl in json.loads(data)["acls"])


def encode_change(resource: Resource) -> bytes:
    """Kafka's LiteralAclChangeStore / ExtendedAclChangeStore encode."""
    resource_type, name, pattern_type = resource
    if pattern_type is PatternType.LITERAL:
        return f"{resource_type.name}:{name}".encode()
    return json.dumps({"version": CHANGE_EVENT_VERSION, "resourceType": resource_type.name, "name": name,
                       "patternType": pattern_type.name}, separators=(",", ":")).encode()


def decode_literal_change(data: bytes) -> Resource:
    resource_type, _, name = data.decode().partition(":")
    return ResourceType[resource_type.upper()], name, PatternType.LITERAL


def decode_extended_change(data: bytes) -> Resource:
    event = json.loads(data)
    return (ResourceType[event["resourceType"].upper()], event["name"],
            PatternType[event["patternType"].upper()])


class ZkAclStore(AclSnapshot):
    """Every broker's view of the cluster's bindings, kept fresh by the change notifications; writes go to
    ZooKeeper first."""

    def __init__(self, zk: KazooClient) -> None:
        self.zk = zk
        self._write_lock = threading.Lock()  # one CreateAcls/DeleteAcls at a time on this broker, as Kafka's lock
        self._cache_lock = threading.Lock()
        self._acls: dict[Resource, Entries] = {}
        for path in (*ROOTS.values(), LITERAL_ACL_CHANGES, EXTENDED_ACL_CHANGES):
            zk.ensure_path(path)
        for path, decode in ((LITERAL_ACL_CHANGES, decode_literal_change),
                             (EXTENDED_ACL_CHANGES, decode_extended_change)):
            ChangeNotificationListener(zk, path, ACL_CHANGE_PREFIX, self._notified(decode)).start()
        self._load_all()

    def validate(self, binding: AclBinding) -> None:
        """A resource name becomes a znode name: one with "/" is refused, as AclAuthorizer.validateAclBinding does."""
        super().validate(binding)
        if "/" in binding.resource_name:
            log.info("Refusing ACL binding %s: its resource name contains '/'", binding)
            raise InvalidRequestError("Failed to create ACL")

    def create(self, bindings: Iterable[AclBinding]) -> None:
        by_resource: dict[Resource, list[AclBinding]] = {}
        for binding in bindings:
            by_resource.setdefault(_resource_of(binding), []).append(binding)
        with self._write_lock:
            for resource, new in by_resource.items():
                self._update(resource, lambda current, new=new: tuple(dict.fromkeys((*current, *new))))

    def delete(self, filters: Sequence[AclBindingFilter]) -> list[list[AclBinding]]:
        """Delete every binding some filter matches; per filter, the bindings it matched, each binding under the
        first filter that matches it (AclAuthorizer.deleteAcls). Resources a filter names exactly are read from
        ZooKeeper even when this broker has not heard of them yet."""
        matched: list[list[AclBinding]] = [[] for _ in filters]
        with self._write_lock:
            exact = {r for f in filters for r in _exact_resources(f)}
            cached = [r for r, entries in self._acls.items() if any(f.matches(b) for b in entries for f in filters)]
            for resource in dict.fromkeys((*cached, *exact)):
                old, new = self._update(resource, lambda current: tuple(
                    b for b in current if not any(f.matches(b) for f in filters)))
                for binding in old:
                    if binding not in new:
                        matched[next(i for i, f in enumerate(filters) if f.matches(binding))].append(binding)
        return matched

    def _update(self, resource: Resource, change: Callable[[Entries], Entries]) -> tuple[Entries, Entries]:
        """Compare-and-set the resource's node; the entries before and after the write that succeeded."""
        path = resource_path(resource)
        while True:
            try:
                data, stat = self.zk.get(path)
                current, version = decode_acls(resource, data), stat.version
            except NoNodeError:
                current, version = (), None
            new = change(current)
            if new == current:
                self._cache(resource, current)
                return current, new
            try:
                if not new:
                    self.zk.delete(path, version=version)
                elif version is None:
                    self.zk.create(path, encode_acls(new), makepath=True)
                else:
                    self.zk.set(path, encode_acls(new), version=version)
            except (BadVersionError, NodeExistsError, NoNodeError):
                continue  # another broker wrote it meanwhile: read again
            log.info("Updated ACLs for %s: %d entries", path, len(new))
            self._cache(resource, new)
            notify(self.zk, LITERAL_ACL_CHANGES if resource[2] is PatternType.LITERAL else EXTENDED_ACL_CHANGES,
                   ACL_CHANGE_PREFIX, encode_change(resource))
            return current, new

    def _notified(self, decode: Callable[[bytes], Resource]) -> Callable[[bytes], None]:
        def reload(data: bytes) -> None:
            try:
                resource = decode(data)
            except (ValueError, KeyError) as exc:
                log.warning("Ignoring an unreadable ACL change notification %r: %s", data, exc)
                return
            self._reload(resource)
            log.info("Processed ACL change notification for %s", resource_path(resource))
        return reload

    def _load_all(self) -> None:
        for pattern_type, root in ROOTS.items():
            for type_name in self.zk.get_children(root):
                resource_type = _RESOURCE_TYPES.get(type_name)
                if resource_type is None:
                    log.warning("Ignoring unknown ResourceType %s under %s", type_name, root)
                    continue
                for name in self.zk.get_children(f"{root}/{type_name}"):
                    self._reload((resource_type, name, pattern_type))
        log.info("Loaded %d ACL bindings from ZooKeeper", len(self._bindings))

    def _reload(self, resource: Resource) -> None:
        try:
            data, _ = self.zk.get(resource_path(resource))
        except NoNodeError:
            data = None
        self._cache(resource, decode_acls(resource, data))

    def _cache(self, resource: Resource, entries: Entries) -> None:
        with self._cache_lock:
            if self._acls.get(resource, ()) == entries:
                return
            if entries:
                self._acls[resource] = entries
            else:
                self._acls.pop(resource, None)
            self._bindings = tuple(b for bindings in self._acls.values() for b in bindings)


def _resource_of(binding: AclBinding) -> Resource:
    return binding.resource_type, binding.resource_name, binding.pattern_type


def _exact_resources(binding_filter: AclBindingFilter) -> list[Resource]:
    """The resources a filter can only mean (Kafka's ResourcePatternFilter.matchesAtMostOne and filterToResources)."""
    name = binding_filter.resource_name
    if (binding_filter.resource_type is ResourceType.ANY or not name or "/" in name
            or binding_filter.pattern_type not in ROOTS):
        return []
    return [(binding_filter.resource_type, name, binding_filter.pattern_type)]
