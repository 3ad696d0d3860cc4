import gzip
import os
import struct
import time
import tracemalloc
from pathlib import Path

import aiokafka.codec
import cramjam
import kafka.codec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wirebroker.protocol.compression import XERIAL_MAGIC, CompressionType, compress, decompress
from wirebroker.protocol.errors import CorruptMessageError, MessageTooLargeError

MiB = 1 << 20
GiB = 1 << 30
CODECS = list(CompressionType)
COMPRESSED = [codec for codec in CompressionType if codec != CompressionType.NONE]
SAMPLE = os.urandom(3000) + bytes(100_000) + b"kafka " * 20_000  # random, runs and text: several blocks each


@settings(max_examples=40, deadline=None)
@given(codec=st.sampled_from(CODECS), data=st.binary(max_size=5000))
def test_round_trip_with_an_exact_budget(codec, data):
    compressed = compress(codec, data)
    assert decompress(codec, compressed, len(data)) == data
    if data:
        with pytest.raises(MessageTooLargeError):
            decompress(codec, compressed, len(data) - 1)


@pytest.mark.parametrize("codec", CODECS)
def test_round_trip_of_multi_block_data_from_memoryviews(codec):
    compressed = compress(codec, memoryview(SAMPLE))
    assert decompress(codec, memoryview(compressed), len(SAMPLE)) == SAMPLE


# What real clients write, for each codec; kafka-python needs python-snappy, lz4 and zstandard for these.
CLIENT_ENCODERS = {
    "kafka-python": {
        CompressionType.GZIP: kafka.codec.gzip_encode,
        CompressionType.SNAPPY: kafka.codec.snappy_encode,
        CompressionType.LZ4: kafka.codec.lz4_encode,
        CompressionType.ZSTD: kafka.codec.zstd_encode,
    },
    "aiokafka": {
        CompressionType.GZIP: aiokafka.codec.gzip_encode,
        CompressionType.SNAPPY: aiokafka.codec.snappy_encode,
        CompressionType.LZ4: aiokafka.codec.lz4_encode,
        CompressionType.ZSTD: aiokafka.codec.zstd_encode,
    },
}
CLIENT_DECODERS = {
    "kafka-python": {
        CompressionType.GZIP: kafka.codec.gzip_decode,
        CompressionType.SNAPPY: kafka.codec.snappy_decode,
        CompressionType.LZ4: kafka.codec.lz4_decode,
        CompressionType.ZSTD: kafka.codec.zstd_decode,
    },
    "aiokafka": {
        CompressionType.GZIP: aiokafka.codec.gzip_decode,
        CompressionType.SNAPPY: aiokafka.codec.snappy_decode,
        CompressionType.LZ4: aiokafka.codec.lz4_decode,
        CompressionType.ZSTD: aiokafka.codec.zstd_decode,
    },
}


@pytest.mark.parametrize("client", CLIENT_ENCODERS)
@pytest.mark.parametrize("codec", COMPRESSED)
def test_reads_what_clients_write(client, codec):
    written = CLIENT_ENCODERS[client][codec](SAMPLE)
    assert decompress(codec, written, len(SAMPLE)) == SAMPLE


@pytest.mark.parametrize("client", CLIENT_DECODERS)
@pytest.mark.parametrize("codec", COMPRESSED)
def test_clients_read_what_we_write(client, codec):
    assert bytes(CLIENT_DECODERS[client][codec](compress(codec, SAMPLE))) == SAMPLE


def test_snappy_is_written_in_xerial_framing_with_32k_blocks():
    written = compress(CompressionType.SNAPPY, SAMPLE)
    assert written[:16] == XERIAL_MAGIC + struct.pack(">ii", 1, 1)
    (first_block_length,) = struct.unpack_from(">i", written, 16)
    first_block = written[20 : 20 + first_block_length]
    assert cramjam.snappy.decompress_raw_len(first_block) == 32 * 1024


def test_raw_snappy_without_xerial_header_is_read():
    assert decompress(CompressionType.SNAPPY, bytes(cramjam.snappy.compress_raw(SAMPLE)), len(SAMPLE)) == SAMPLE


def test_lz4_frames_have_independent_blocks_as_kafka_requires():
    written = compress(CompressionType.LZ4, SAMPLE)
    assert written[:4] == b"\x04\x22\x4d\x18"
    flg = written[4]
    assert flg >> 6 == 1  # frame version 01
    assert flg & 0x20  # block independence: Kafka's Lz4BlockInputStream decodes each block alone


@pytest.mark.parametrize("codec", COMPRESSED)
@pytest.mark.parametrize(
    "mangle",
    [
        lambda data: b"definitely not a compressed stream" * 3,
        lambda data: data[: len(data) // 2],
        lambda data: b"",
    ],
    ids=["garbage", "truncated", "empty"],
)
def test_malformed_streams_are_corrupt_messages(codec, mangle):
    with pytest.raises(CorruptMessageError):
        decompress(codec, mangle(compress(codec, SAMPLE)), 10 * len(SAMPLE))


def test_xerial_block_length_past_the_end_is_corrupt():
    written = bytearray(compress(CompressionType.SNAPPY, SAMPLE))
    struct.pack_into(">i", written, 16, len(written))
    with pytest.raises(CorruptMessageError):
        decompress(CompressionType.SNAPPY, written, 10 * len(SAMPLE))


def test_unknown_codec_ids():
    with pytest.raises(CorruptMessageError):
        decompress(5, b"x", 100)
    with pytest.raises(ValueError):
        compress(7, b"x")


# Decompression bombs. Each maker builds a valid stream of zeros by repeating one compressed unit, so building a
# 1 GiB bomb is cheap; test_bomb_makers_build_what_they_claim checks the same makers at a small count.
# How small a 1 GiB bomb can be depends on the codec's best ratio: zstd ~32 KB, gzip ~1 MB (deflate tops out near
# 1:1032), lz4 ~4.5 MB (1:255); snappy (~1:21) needs ~50 MB, so its small bombs lie in the declared lengths instead.


def gzip_bomb(mebibytes):  # concatenated gzip members, each 1 MiB of zeros
    return gzip.compress(bytes(MiB), 9) * mebibytes


def zstd_bomb(mebibytes):  # concatenated zstd frames, each 1 MiB of zeros
    return bytes(cramjam.zstd.compress(bytes(MiB), level=19)) * mebibytes


def lz4_bomb(mebibytes):  # one LZ4 frame whose independent 64 KiB blocks of zeros all compress alike
    compressor = cramjam.lz4.Compressor(content_checksum=False, block_linked=False)
    compressor.compress(bytes(64 * 1024))
    frame = bytes(compressor.finish())
    header, block, end_mark = frame[:7], frame[7:-4], frame[-4:]
    return header + block * (16 * mebibytes) + end_mark


def xerial_bomb(mebibytes):  # xerial framing, each block 32 KiB of zeros
    block = bytes(cramjam.snappy.compress_raw(bytes(32 * 1024)))
    header = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
    return header + (struct.pack(">i", len(block)) + block) * (32 * mebibytes)


def snappy_declared_bomb(size):  # a raw snappy block that claims `size` bytes (its varint header) and is tiny
    varint = bytearray()
    while True:
        varint.append(size & 0x7F | (0x80 if size > 0x7F else 0))
        size >>= 7
        if not size:
            return bytes(varint) + b"\x00" * 8


BOMB_MAKERS = {
    CompressionType.GZIP: gzip_bomb,
    CompressionType.ZSTD: zstd_bomb,
    CompressionType.LZ4: lz4_bomb,
    CompressionType.SNAPPY: xerial_bomb,
}


@pytest.mark.parametrize("codec", BOMB_MAKERS)
def test_bomb_makers_build_what_they_claim(codec):
    assert decompress(codec, BOMB_MAKERS[codec](3), 3 * MiB) == bytes(3 * MiB)


def refuse_with_bounded_memory(codec, data, max_size):
    """Decompress expecting a refusal; return the peak of Python and of native (RSS) memory, and the time taken."""
    clear_refs = Path("/proc/self/clear_refs")
    rss_at_start = _status_kib("VmRSS")
    if os.access(clear_refs, os.W_OK):
        clear_refs.write_text("5")  # resets VmHWM, the peak resident set size
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(MessageTooLargeError):
            decompress(codec, data, max_size)
        elapsed = time.monotonic() - started
        _, python_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    native_peak = (_status_kib("VmHWM") - rss_at_start) * 1024 if os.access(clear_refs, os.W_OK) else 0
    return python_peak, native_peak, elapsed


def _status_kib(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


@pytest.mark.parametrize("codec", [CompressionType.GZIP, CompressionType.ZSTD, CompressionType.LZ4])
def test_gigabyte_bombs_are_refused_quickly_in_little_memory(codec):
    bomb = BOMB_MAKERS[codec](GiB // MiB)
    python_peak, native_peak, elapsed = refuse_with_bounded_memory(codec, bomb, 8 * MiB)
    assert python_peak < 64 * MiB
    assert native_peak < 64 * MiB
    assert elapsed < 2.0  # expanding 1 GiB takes longer than this; stopping at 8 MiB takes milliseconds


def test_zstd_bomb_is_tens_of_kilobytes():
    assert len(zstd_bomb(GiB // MiB)) < 64 * 1024


def test_snappy_bombs_are_refused_by_their_declared_lengths():
    header = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
    lying_block = snappy_declared_bomb(GiB)
    for bomb in (lying_block, header + struct.pack(">i", len(lying_block)) + lying_block):
        python_peak, native_peak, elapsed = refuse_with_bounded_memory(CompressionType.SNAPPY, bomb, 8 * MiB)
        assert python_peak < 64 * MiB
        assert native_peak < 64 * MiB
        assert elapsed < 1.0


def test_snappy_blocks_adding_up_past_the_budget_are_refused_at_the_budget():
    python_peak, native_peak, _ = refuse_with_bounded_memory(CompressionType.SNAPPY, xerial_bomb(256), 8 * MiB)
    assert python_peak < 64 * MiB
    assert native_peak < 64 * MiB
