from hypothesis import given
from hypothesis import strategies as st

import pytest

from wirebroker.protocol import primitives as p


@given(st.integers(0, 2**32 - 1))
def test_uvarint_round_trip(value):
    out = bytearray()
    p.write_uvarint(out, value)
    assert len(out) == p.uvarint_size(value)
    assert p.read_uvarint(out, 0) == (value, len(out))


@given(st.integers(-(2**31), 2**31 - 1))
def test_varint_round_trip(value):
    out = bytearray()
    p.write_varint(out, value)
    assert p.read_varint(out, 0) == (value, len(out))


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_round_trip(value):
    out = bytearray()
    p.write_varlong(out, value)
    assert p.read_varlong(out, 0) == (value, len(out))


def test_known_zigzag_encodings():
    # From Kafka's ByteUtilsTest: zig-zag maps 0,-1,1,-2 to 0,1,2,3.
    for value, encoded in [(0, b"\x00"), (-1, b"\x01"), (1, b"\x02"), (-2, b"\x03"), (300, b"\xd8\x04")]:
        out = bytearray()
        p.write_varint(out, value)
        assert bytes(out) == encoded


def test_overlong_varint_is_a_decode_error():
    with pytest.raises(p.DecodeError):
        p.read_uvarint(b"\xff\xff\xff\xff\xff\x01", 0)
    with pytest.raises(p.DecodeError):
        p.read_varlong(b"\xff" * 11, 0)


def test_output_keeps_external_parts_in_order():
    out = p.Output()
    out += b"head"
    p.write_records(out, b"-inline-")

    class Region:
        def __len__(self):
            return 100

    region = Region()
    p.write_records(out, region)
    out += b"tail"
    assert out.parts() == [b"head-inline-", region, b"tail"]
    assert out.size() == len(b"head-inline-") + 100 + 4
