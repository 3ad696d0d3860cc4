"""Hostile bytes: decoders raise only DecodeError, never allocate from an unchecked length, never read past the end.

For every (API, version) a message with every field populated (one element per array, so every count, length and
tagged section is on the wire) is encoded; then each byte offset in turn is overwritten with the largest int16,
int32 and unsigned varint, and every strict prefix is decoded too. A count or length that claims more than the
bytes left must fail before anything is allocated from it (CVE-2022-34917), which the memory peak bounds.
"""

import tracemalloc

import pytest

from tests.unit.protocol.message_strategies import all_messages, message_class, struct_class
from wirebroker.protocol.codegen.schema import Field, Message, Struct
from wirebroker.protocol.primitives import DecodeError

CASES = [(m, v) for m in all_messages() for v in m.versions()]
HOSTILE = (b"\x7f\xff", b"\x7f\xff\xff\xff", b"\xff\xff\xff\xff\x0f")
PEAK_LIMIT = 8 * 1024 * 1024

_SAMPLES = {
    "bool": True, "int8": 7, "int16": 300, "uint16": 65000, "int32": 70000, "uint32": 4000000000, "int64": 2**40,
    "float64": 1.5, "uuid": bytes(range(16)), "string": "ab", "bytes": b"cd", "records": b"records",
}


def populated(message: Message, struct: Struct, version: int):
    def value(f: Field):
        element = populated(message, f.struct, version) if f.is_struct else _SAMPLES[f.element_type]
        return [element] if f.is_array else element

    cls = struct_class(message, struct)
    return cls(**{f.attr: value(f) for f in struct.fields if version in f.versions})


def decode_or_decode_error(cls, data, version):
    try:
        cls.decode(data, version)
    except DecodeError:
        return False
    return True


@pytest.mark.parametrize("message,version", CASES, ids=[f"{m.name}-v{v}" for m, v in CASES])
def test_hostile_lengths_and_truncations(message, version):
    cls = message_class(message)
    encoded = populated(message, message.struct, version).encode(version)
    tracemalloc.start()
    try:
        for end in range(len(encoded)):
            assert not decode_or_decode_error(cls, encoded[:end], version), f"prefix of {end} bytes decoded"
        for pos in range(len(encoded)):
            for hostile in HOSTILE:
                decode_or_decode_error(cls, encoded[:pos] + hostile + encoded[pos + len(hostile):], version)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < PEAK_LIMIT
