"""Hypothesis strategies for any generated message at any version, built from the same schema model as the code."""

from __future__ import annotations

import importlib
from functools import lru_cache
from pathlib import Path

from hypothesis import strategies as st

from wirebroker.protocol.codegen.render import module_name
from wirebroker.protocol.codegen.schema import Field, Message, Struct, load_all

SCHEMAS = Path(__file__).resolve().parents[3] / "schemas"

_INTS = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


@lru_cache(maxsize=1)
def all_messages() -> list[Message]:
    return load_all(SCHEMAS)


def message_class(message: Message) -> type:
    module = importlib.import_module(f"wirebroker.protocol.messages.{module_name(message)}")
    return getattr(module, message.name)


def struct_class(message: Message, struct: Struct) -> type:
    cls = message_class(message)
    return cls if struct is message.struct else getattr(cls, struct.name)


def _primitive(kind: str) -> st.SearchStrategy:
    if kind in _INTS:
        low, high = _INTS[kind]
        return st.integers(low, high)
    if kind == "bool":
        return st.booleans()
    if kind == "float64":
        return st.floats(allow_nan=False)
    if kind == "uuid":
        return st.binary(min_size=16, max_size=16)
    if kind == "string":
        return st.text(max_size=20)
    return st.binary(max_size=40)  # bytes, records


def field_values(message: Message, f: Field, version: int) -> st.SearchStrategy:
    if f.is_struct:
        element = struct_values(message, f.struct, version)
    else:
        element = _primitive(f.element_type)
    values = st.lists(element, max_size=3) if f.is_array else element
    if version in f.nullable_versions:
        values = st.none() | values
    return values


def struct_values(message: Message, struct: Struct, version: int) -> st.SearchStrategy:
    """Instances holding random values in the fields `version` carries, defaults elsewhere."""
    cls = struct_class(message, struct)
    present = {f.attr: field_values(message, f, version) for f in struct.fields if version in f.versions}
    return st.deferred(lambda: st.builds(cls, **present))
