"""Client quota entities and their rules (Kafka's ClientQuotaEntity, QuotaConfigs, ClientQuotaControlManager's checks
and ClientQuotasImage.describe's matching).

An entity names up to two of the types user, client-id and ip, each with a name or None for the type's default
(`kafka-configs.sh --entity-default`); the allowed shapes are (user), (client-id), (user, client-id) and (ip). Here an
entity is a sorted tuple of (type, name) pairs, hashable and the same however a request ordered them.

Keys: user and client-id entities take producer_byte_rate and consumer_byte_rate (bytes/s, Kafka LONG values),
request_percentage and controller_mutation_rate (DOUBLE); ip entities take connection_creation_rate (INT, >= 0).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Mapping

USER, CLIENT_ID, IP = "user", "client-id", "ip"
ENTITY_TYPES = (USER, CLIENT_ID, IP)

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"
CONNECTION_CREATION_RATE = "connection_creation_rate"

_LONG, _DOUBLE, _INT = "LONG", "DOUBLE", "INT"
CLIENT_KEYS = {PRODUCER_BYTE_RATE: _LONG, CONSUMER_BYTE_RATE: _LONG, REQUEST_PERCENTAGE: _DOUBLE,
               CONTROLLER_MUTATION_RATE: _DOUBLE}
IP_KEYS = {CONNECTION_CREATION_RATE: _INT}
_LARGEST = {_INT: (2**31 - 1, "an INT"), _LONG: (2**63 - 1, "a LONG")}

# DescribeClientQuotas component match types (ComponentData.matchType)
MATCH_TYPE_EXACT, MATCH_TYPE_DEFAULT, MATCH_TYPE_SPECIFIED = 0, 1, 2

Entity = tuple[tuple[str, str | None], ...]  # sorted (entity type, name or None for the default)
Quotas = Mapping[Entity, Mapping[str, float]]


class ClientQuotaError(Exception):
    """A refused alteration or filter; `code_name` is the Kafka error (INVALID_REQUEST, UNSUPPORTED_VERSION, ...)."""

    def __init__(self, message: str, code_name: str = "INVALID_REQUEST") -> None:
        super().__init__(message)
        self.code_name = code_name


def entity_of(pairs: Iterable[tuple[str, str | None]]) -> Entity:
    return tuple(sorted(pairs, key=lambda pair: pair[0]))


def describe_entity(entity: Entity) -> str:
    """As Kafka's ClientQuotaEntity prints in error messages."""
    return "ClientQuotaEntity(entries={" + ", ".join(f"{t}={n}" for t, n in entity) + "})"


def entity_from_request(entity_pairs: list[tuple[str, str | None]]) -> Entity:
    """A request's entity as Kafka reads it into a map: a type named twice keeps its last name."""
    return entity_of(dict(entity_pairs).items())


def check_alteration(entity: Entity, ops: list[tuple[str, float | None]]) -> None:
    """ClientQuotaError as Kafka 4.3.1 refuses the alteration (ops: key, value or None to remove); messages checked
    against it."""
    if not entity:
        raise ClientQuotaError("Invalid empty client quota entity")
    names = dict(entity)
    for entity_type, name in entity:
        if entity_type not in ENTITY_TYPES:
            raise ClientQuotaError(f"Unhandled client quota entity type: {entity_type}")
        if name is not None and not name:
            raise ClientQuotaError(f"Empty {entity_type} not supported")
    keys = _keys_for(names)
    seen: set[str] = set()
    for key, value in ops:
        if key in seen:
            raise ClientQuotaError(f"Duplicate quota key {key} not updating quota for this entity "
                                   f"{describe_entity(entity)}")
        seen.add(key)
        if value is not None:
            _check_value(keys, key, value)


def _keys_for(names: Mapping[str, str | None]) -> Mapping[str, str]:
    if IP in names:
        if len(names) > 1:
            raise ClientQuotaError("Invalid quota entity combination, IP entity shouldnot be combined with User or "
                                   "ClientId")  # sic
        if names[IP] is not None and not _resolvable(names[IP]):
            raise ClientQuotaError(f"{names[IP]} is not a valid IP or resolvable host.")
        return IP_KEYS
    return CLIENT_KEYS


def _resolvable(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    try:
        socket.getaddrinfo(host, None)
        return True
    except OSError:
        return False


def _check_value(keys: Mapping[str, str], key: str, value: float) -> None:
    kind = keys.get(key)
    if kind is None:
        raise ClientQuotaError(f"Invalid configuration key {key}")
    if value <= 0:
        raise ClientQuotaError(f"Quota {key} must be greater than 0")
    if kind in _LARGEST:
        largest, name = _LARGEST[kind]
        if value > largest:
            raise ClientQuotaError(f"Proposed value for {key} is too large for {name}.")
        if value != int(value):
            raise ClientQuotaError(f"{key} cannot be a fractional value.")


def check_filter(components: list[tuple[str, int, str | None]]) -> tuple[dict[str, str | None], set[str]]:
    """(exact matches, types that must be present) of a DescribeClientQuotas filter, or ClientQuotaError as
    ClientQuotasImage.describe refuses it."""
    exact: dict[str, str | None] = {}
    specified: set[str] = set()
    for entity_type, match_type, match in components:
        if not entity_type:
            raise ClientQuotaError("Invalid empty entity type.")
        if entity_type in exact or entity_type in specified:
            raise ClientQuotaError(f"Entity type {entity_type} cannot appear more than once in the filter.")
        if entity_type not in ENTITY_TYPES:
            raise ClientQuotaError(f"Unsupported entity type {entity_type}", "UNSUPPORTED_VERSION")
        if match_type == MATCH_TYPE_EXACT:
            if match is None:
                raise ClientQuotaError("Request specified MATCH_TYPE_EXACT, but set match string to null.")
            exact[entity_type] = match
        elif match_type == MATCH_TYPE_DEFAULT:
            if match is not None:
                raise ClientQuotaError("Request specified MATCH_TYPE_DEFAULT, but also specified a match string.")
            exact[entity_type] = None
        elif match_type == MATCH_TYPE_SPECIFIED:
            if match is not None:
                raise ClientQuotaError("Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.")
            specified.add(entity_type)
        else:
            raise ClientQuotaError(f"Unknown match type {match_type}")
    named = exact.keys() | specified
    if IP in named and (USER in named or CLIENT_ID in named):
        raise ClientQuotaError("Invalid entity filter component combination. IP filter component should not be used "
                               "with user or clientId filter component.")
    return exact, specified


def matches(entity: Entity, exact: Mapping[str, str | None], specified: set[str], strict: bool) -> bool:
    """Whether an entity passes a filter (ClientQuotasImage.matches): every exact component equal, every specified
    type present, and with `strict` no other type."""
    names = dict(entity)
    if strict and len(names) != len(exact) + len(specified):
        return False
    return (all(t in names and names[t] == name for t, name in exact.items())
            and all(t in names for t in specified))
