"""Record batch compression: compress and decompress by Kafka's codec id, with a bound on decompressed size.

A v2 record batch names its codec in the low three bits of its attributes (Kafka's ``CompressionType``):
0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd. Everything after the batch header is one compressed stream of the records.
The stream formats are the ones Kafka's clients write:

- gzip: an RFC 1952 gzip stream; concatenated members are read as one stream, as Java's GZIPInputStream does.
- snappy: snappy-java's "xerial" framing, which the Java producer and librdkafka write::

      magic    8 bytes   0x82 'S' 'N' 'A' 'P' 'P' 'Y' 0x00
      version  int32     1
      compat   int32     1      (oldest version a reader must understand)
      then, to the end: [length int32 big-endian, raw snappy block of that length] ...

  Each block holds at most 32 KiB of input (snappy-java's default block size). Like snappy-java's SnappyInputStream,
  input that does not start with the magic is read as one raw snappy block.
- lz4: the standard LZ4 frame format with independent blocks. Kafka's Lz4BlockInputStream decompresses every block
  on its own, so frames with linked blocks are not Kafka's format; we write independent 64 KiB blocks. (The old
  broken header checksum only occurs with magic < 2, which this broker does not accept.)
- zstd: one or more zstd frames.

Decompression is bounded: ``decompress`` never produces more than ``max_size`` bytes and stops working once the
output would pass it, so a small bomb cannot make it expand gigabytes. gzip, lz4 and zstd decompress into an output
buffer of a fixed size that grows (by re-decompressing) up to ``max_size``; cramjam stops as soon as that buffer is
full. snappy blocks declare their decompressed length up front, which is checked against what is left of the budget
before the block is decompressed.

Errors, raised as Kafka's typed errors:
- output larger than ``max_size`` -> MessageTooLargeError (Kafka: "a message larger than the max message size the
  server will accept"), whether the stream is valid or not past that point;
- malformed or truncated input, or an unknown codec id -> CorruptMessageError. (Kafka's broker answers a stream it
  cannot decompress with UNKNOWN_SERVER_ERROR, from an unexpected exception; CORRUPT_MESSAGE says what happened.)
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Callable

import cramjam

from wirebroker.protocol.errors import CorruptMessageError, MessageTooLargeError

BytesLike = bytes | bytearray | memoryview


class CompressionType(enum.IntEnum):
    """Kafka's codec ids, as stored in the low three bits of a record batch's attributes."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = struct.Struct(">8sii")  # magic, version, compatible version
_XERIAL_VERSION = 1
_XERIAL_BLOCK_LENGTH = struct.Struct(">i")
XERIAL_BLOCK_SIZE = 32 * 1024  # snappy-java's default block size, as written by Kafka's Java producer

# cramjam's error text when the output buffer is full (Rust's io::ErrorKind::WriteZero); the one error that means
# "more output than room", which tests pin down.
_OUTPUT_FULL = "failed to write whole buffer"
# The first output buffer: room for a typical compression ratio, grown by _GROWTH up to the caller's budget. A
# bigger first guess wastes memory on small batches; a smaller one repeats work on large ones.
_FIRST_OUTPUT_MIN = 64 * 1024
_FIRST_OUTPUT_RATIO = 4
_GROWTH = 4


def compress(codec: int, data: BytesLike) -> bytes:
    """Compress ``data`` the way Kafka's producers do for ``codec``; ValueError for a codec id that does not exist."""
    match codec:
        case CompressionType.NONE:
            return bytes(data)
        case CompressionType.GZIP:
            return bytes(cramjam.gzip.compress(data))
        case CompressionType.SNAPPY:
            return _xerial_compress(memoryview(data))
        case CompressionType.LZ4:
            compressor = cramjam.lz4.Compressor(block_linked=False)
            compressor.compress(bytes(data))  # its streaming API takes bytes only
            return bytes(compressor.finish())
        case CompressionType.ZSTD:
            return bytes(cramjam.zstd.compress(data))
    raise ValueError(f"unknown compression codec id {codec}")


def decompress(codec: int, data: BytesLike, max_size: int) -> bytes:
    """Decompress ``data`` written with ``codec``, refusing to produce more than ``max_size`` bytes.

    Raises MessageTooLargeError past ``max_size`` and CorruptMessageError for bad input or an unknown codec id.
    """
    match codec:
        case CompressionType.NONE:
            if len(memoryview(data)) > max_size:
                raise MessageTooLargeError(f"records are larger than {max_size} bytes")
            return bytes(data)
        case CompressionType.GZIP:
            return _decompress_bounded(cramjam.gzip.decompress_into, data, max_size, "gzip")
        case CompressionType.SNAPPY:
            return _snappy_decompress(memoryview(data), max_size)
        case CompressionType.LZ4:
            return _decompress_bounded(cramjam.lz4.decompress_into, data, max_size, "lz4")
        case CompressionType.ZSTD:
            return _decompress_bounded(cramjam.zstd.decompress_into, data, max_size, "zstd")
    raise CorruptMessageError(f"unknown compression codec id {codec}")


def _decompress_bounded(
    decompress_into: Callable[[BytesLike, bytearray], int], data: BytesLike, max_size: int, name: str
) -> bytes:
    size = min(max_size, max(_FIRST_OUTPUT_MIN, _FIRST_OUTPUT_RATIO * len(memoryview(data))))
    while True:
        out = bytearray(size)
        try:
            written = decompress_into(data, out)
        except cramjam.DecompressionError as exc:
            if str(exc) != _OUTPUT_FULL:
                raise CorruptMessageError(f"invalid {name} stream: {exc}") from exc
            if size >= max_size:
                raise MessageTooLargeError(f"{name} records decompress to more than {max_size} bytes") from None
            size = min(max_size, size * _GROWTH)
            continue
        del out[written:]
        return bytes(out)


def _xerial_compress(data: memoryview) -> bytes:
    parts = [_XERIAL_HEADER.pack(XERIAL_MAGIC, _XERIAL_VERSION, _XERIAL_VERSION)]
    for start in range(0, len(data), XERIAL_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(data[start : start + XERIAL_BLOCK_SIZE]))
        parts.append(_XERIAL_BLOCK_LENGTH.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def _snappy_decompress(data: memoryview, max_size: int) -> bytes:
    is_xerial = len(data) >= _XERIAL_HEADER.size and data[: len(XERIAL_MAGIC)] == XERIAL_MAGIC
    blocks = _xerial_blocks(data) if is_xerial else (data,)
    out = bytearray()
    try:
        for block in blocks:
            if cramjam.snappy.decompress_raw_len(block) > max_size - len(out):
                raise MessageTooLargeError(f"snappy records decompress to more than {max_size} bytes")
            out += cramjam.snappy.decompress_raw(block)
    except cramjam.DecompressionError as exc:
        raise CorruptMessageError(f"invalid snappy stream: {exc}") from exc
    return bytes(out)


def _xerial_blocks(data: memoryview) -> list[memoryview]:
    blocks = []
    pos = _XERIAL_HEADER.size
    while pos < len(data):
        if len(data) - pos < _XERIAL_BLOCK_LENGTH.size:
            raise CorruptMessageError("truncated xerial snappy block length")
        (length,) = _XERIAL_BLOCK_LENGTH.unpack_from(data, pos)
        pos += _XERIAL_BLOCK_LENGTH.size
        if not 0 <= length <= len(data) - pos:
            raise CorruptMessageError(f"xerial snappy block length {length} overruns the {len(data) - pos} bytes left")
        blocks.append(data[pos : pos + length])
        pos += length
    return blocks
