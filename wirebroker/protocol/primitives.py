"""The wire primitives that generated codecs share: varints, the output buffer, and the decode error.

Generated modules (`protocol/messages/`) inline fixed-width fields as `struct` calls; what cannot be inlined in a
line or two lives here. Every reader takes a buffer and a position and returns `(value, next_position)`; every
writer appends to an `Output`. Nothing here allocates from a length it has not checked against the bytes left: a
declared count or length larger than what remains is `DecodeError`, raised before any allocation (CVE-2022-34917).
"""

from __future__ import annotations

import struct
from typing import Any

UUID_ZERO = bytes(16)
# A compact count of one byte (N+1, under 128) indexes the range a generated reader loops over: a prebuilt range
# costs less than building range(N) for every array (8 % of a one-partition Produce request's decode).
COMPACT_COUNT_RANGES = (range(0), *(range(n) for n in range(127)))
INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")

# A uint32 needs at most 5 varint bytes, a uint64 at most 10 (7 payload bits per byte).
_MAX_VARINT_BYTES = 5
_MAX_VARLONG_BYTES = 10


class DecodeError(ValueError):
    """Bytes that do not form a valid message: the connection that sent them is closed."""


class Output(bytearray):
    """Encoder output: a bytearray, plus the file ranges a records field may stand for.

    A fetch response's records are often a range of a log file sent with `os.sendfile`; such a value is not
    bytes-like, so it cannot be appended. `parts()` returns the chunks in wire order: bytes, file range, bytes, ...
    """

    # A class default, not an __init__: every response builds one, and most never hold a file range (an instance
    # gets its own list at its first one). No __slots__, which would forbid the default.
    _parts: list[Any] | None = None

    def append_external(self, part: Any) -> None:
        """Append a non-bytes part (anything with `len()`), keeping wire order."""
        if self._parts is None:
            self._parts = []
        self._parts.append(bytes(self))
        self._parts.append(part)
        del self[:]

    def parts(self) -> list[Any]:
        if self._parts is None:
            return [bytes(self)]
        return [*self._parts, bytes(self)]

    def size_prefixed_parts(self) -> list[Any]:
        """The parts of a frame that began with 4 placeholder bytes, with the frame's size written into them."""
        if self._parts is None:
            INT32.pack_into(self, 0, len(self) - 4)
            return [self]
        size = self.size() - 4
        first = bytearray(self._parts[0])
        INT32.pack_into(first, 0, size)
        return [first, *self._parts[1:], bytes(self)]

    def size(self) -> int:
        external = sum(len(part) for part in self._parts) if self._parts else 0
        return external + len(self)


def read_uvarint_tail(buf: Any, pos: int, first: int) -> tuple[int, int]:
    """Finish an unsigned varint whose first byte (with the continuation bit set) was already read. The second and
    third bytes are read without the loop: every length up to 2 MiB (a record batch's, say) ends there."""
    second = buf[pos]
    if second < 0x80:
        return (first & 0x7F) | second << 7, pos + 1
    third = buf[pos + 1]
    if third < 0x80:
        return (first & 0x7F) | (second & 0x7F) << 7 | third << 14, pos + 2
    value = (first & 0x7F) | (second & 0x7F) << 7 | (third & 0x7F) << 14
    pos += 2
    shift = 21
    for _ in range(_MAX_VARINT_BYTES - 3):
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
    raise DecodeError("unsigned varint longer than 5 bytes")


def read_uvarint(buf: Any, pos: int) -> tuple[int, int]:
    byte = buf[pos]
    if byte < 0x80:
        return byte, pos + 1
    return read_uvarint_tail(buf, pos + 1, byte)


def read_varint(buf: Any, pos: int) -> tuple[int, int]:
    """A zig-zag encoded signed varint (int32)."""
    raw, pos = read_uvarint(buf, pos)
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(buf: Any, pos: int) -> tuple[int, int]:
    """A zig-zag encoded signed varlong (int64)."""
    raw = 0
    shift = 0
    for _ in range(_MAX_VARLONG_BYTES):
        byte = buf[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7
    raise DecodeError("varlong longer than 10 bytes")


def write_uvarint(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def write_varint(out: bytearray, value: int) -> None:
    write_uvarint(out, ((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def write_varlong(out: bytearray, value: int) -> None:
    write_uvarint(out, ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


def uvarint_size(value: int) -> int:
    size = 1
    while value >= 0x80:
        value >>= 7
        size += 1
    return size


def check_length(length: int, pos: int, end: int, what: str) -> int:
    """The end position of `length` bytes at `pos`, or DecodeError if they are not all there."""
    stop = pos + length
    if stop > end:
        raise DecodeError(f"{what}: length {length} exceeds the {end - pos} bytes left")
    return stop


def check_count(count: int, pos: int, end: int, what: str) -> None:
    """Every element costs at least one byte, so a count above the bytes left cannot be valid."""
    if count > end - pos:
        raise DecodeError(f"{what}: count {count} exceeds the {end - pos} bytes left")


EXTERNAL_RECORDS_BYTES = 4096  # records this large are sent as their own part rather than copied into the output


def write_records(out: Output, value: Any) -> None:
    """Append a records value: small bytes-like are copied in; large ones and file ranges are kept as parts."""
    if len(value) < EXTERNAL_RECORDS_BYTES and isinstance(value, (bytes, bytearray, memoryview)):
        out += value
    else:
        out.append_external(value)



class UnsupportedFieldError(ValueError):
    """A non-default value in a field the chosen version cannot carry (Kafka's UnsupportedVersionException)."""


def skip_tagged_fields(buf: Any, pos: int) -> int:
    """The position after a tagged-field section whose fields are not kept (a flat reader's, codegen/flat.py)."""
    count, pos = read_uvarint(buf, pos)
    check_count(count, pos, len(buf), "tagged fields")
    for _ in range(count):
        _, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        pos = check_length(size, pos, len(buf), "tagged field")
    return pos


def write_tagged_fields(out: bytearray, tags: list[tuple[int, bytes | bytearray]]) -> None:
    """The tagged-field section of a flexible struct: count, then (tag, size, bytes) in ascending tag order."""
    write_uvarint(out, len(tags))
    for tag, data in tags:
        write_uvarint(out, tag)
        write_uvarint(out, len(data))
        out += data
