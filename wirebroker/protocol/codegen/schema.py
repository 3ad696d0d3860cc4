"""The schema model: Kafka's JSON message specs read into messages, structs, fields and version ranges.

Reads the files under `schemas/` (Kafka's JSON format, comments allowed as upstream writes them). A field's type is
a primitive, `[]primitive`, a struct declared inline (`fields`), or a struct declared once in `commonStructs`.
Structs are named per message file, as in Kafka's generator: every struct becomes an inner class of its message.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

PRIMITIVES = frozenset(
    {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64", "uuid", "string", "bytes", "records"}
)
_COMMENT = re.compile(r"^\s*//.*$", re.MULTILINE)
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@dataclass(frozen=True)
class Versions:
    """An inclusive range of versions; `none` is the empty range."""

    low: int
    high: int  # inclusive; a large number stands for "and every later version"

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        if text is None or text == "none":
            return NO_VERSIONS
        text = text.strip()
        if text.endswith("+"):
            return cls(int(text[:-1]), 1 << 15)
        low, _, high = text.partition("-")
        return cls(int(low), int(high or low))

    def __contains__(self, version: int) -> bool:
        return self.low <= version <= self.high

    def __bool__(self) -> bool:
        return self.low <= self.high


NO_VERSIONS = Versions(0, -1)


def snake_case(name: str) -> str:
    return _CAMEL_BOUNDARY.sub("_", name).lower()


def strip_comments(text: str) -> str:
    return _COMMENT.sub("", text)


@dataclass
class Field:
    name: str
    type: str  # "int32", "[]int32", "[]TopicData", "LeaderIdAndEpoch", ...
    versions: Versions
    nullable_versions: Versions
    tagged_versions: Versions
    tag: int | None
    default: str | None
    ignorable: bool
    flexible_versions: Versions | None  # a field-level override (RequestHeader's ClientId is never compact)
    zero_copy: bool
    struct: Struct | None = None  # resolved for struct-typed fields

    @property
    def attr(self) -> str:
        return snake_case(self.name)

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        return self.element_type not in PRIMITIVES


@dataclass
class Struct:
    name: str
    fields: list[Field]


@dataclass
class Message:
    name: str  # "ProduceRequest"
    kind: str  # request, response, header, data
    api_key: int | None
    valid_versions: Versions
    flexible_versions: Versions
    latest_version_unstable: bool
    listeners: tuple[str, ...]
    source: str  # the schema file's path relative to schemas/
    struct: Struct = field(init=False)
    structs: dict[str, Struct] = field(default_factory=dict)  # every inner struct of the message, by name

    def versions(self) -> range:
        return range(self.valid_versions.low, self.valid_versions.high + 1)


def load_message(path: Path, root: Path) -> Message:
    spec = json.loads(strip_comments(path.read_text()))
    message = Message(
        name=spec["name"],
        kind=spec["type"],
        api_key=spec.get("apiKey"),
        valid_versions=Versions.parse(spec["validVersions"]),
        flexible_versions=Versions.parse(spec.get("flexibleVersions")),
        latest_version_unstable=bool(spec.get("latestVersionUnstable", False)),
        listeners=tuple(spec.get("listeners", ())),
        source=str(path.relative_to(root)),
    )
    common = {c["name"]: Struct(c["name"], []) for c in spec.get("commonStructs", ())}
    message.structs.update(common)
    for c in spec.get("commonStructs", ()):
        common[c["name"]].fields = [_field(f, message) for f in c["fields"]]
    message.struct = Struct(message.name, [_field(f, message) for f in spec["fields"]])
    _resolve(message.struct, message)
    for struct in common.values():
        _resolve(struct, message)
    return message


def field_versions(spec: dict) -> Versions:
    """A field's versions; a field declared with taggedVersions only exists in those (Kafka's FieldSpec: "If
    versions is not set, but taggedVersions is, default to taggedVersions")."""
    versions = spec.get("versions", spec.get("taggedVersions"))
    if versions is None:
        raise ValueError(f"field {spec['name']}: neither versions nor taggedVersions")
    return Versions.parse(versions)


def _field(spec: dict, message: Message) -> Field:
    flexible = spec.get("flexibleVersions")
    result = Field(
        name=spec["name"],
        type=spec["type"],
        versions=field_versions(spec),
        nullable_versions=Versions.parse(spec.get("nullableVersions")),
        tagged_versions=Versions.parse(spec.get("taggedVersions")),
        tag=spec.get("tag"),
        default=_default_text(spec["default"]) if "default" in spec else None,
        ignorable=bool(spec.get("ignorable", False)),
        flexible_versions=Versions.parse(flexible) if flexible is not None else None,
        zero_copy=bool(spec.get("zeroCopy", False)),
    )
    if "fields" in spec:
        struct = Struct(result.element_type, [_field(f, message) for f in spec["fields"]])
        if struct.name in message.structs:
            raise ValueError(f"{message.name}: struct {struct.name} declared twice")
        message.structs[struct.name] = struct
        result.struct = struct
    return result


def _default_text(default: object) -> str | None:
    """Defaults as upstream writes them: mostly strings, sometimes JSON numbers, booleans or null."""
    if isinstance(default, bool):
        return "true" if default else "false"
    return "null" if default is None else str(default)


def _resolve(struct: Struct, message: Message) -> None:
    for f in struct.fields:
        if f.is_struct and f.struct is None:
            try:
                f.struct = message.structs[f.element_type]
            except KeyError:
                raise ValueError(f"{message.name}.{f.name}: unknown type {f.type}") from None
        if f.struct is not None and f.struct is not struct:
            _resolve(f.struct, message)


def load_all(root: Path) -> list[Message]:
    """Every message under `root`, sorted by path so generated output is deterministic."""
    return [load_message(path, root) for path in sorted(root.glob("*/*.json"))]
