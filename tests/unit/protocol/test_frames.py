"""FrameReader: splitting a byte stream into size-prefixed payloads, however the stream is cut."""

import io
import time
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wirebroker.protocol.frames import (
    SIZE_PREFIX,
    SPARE_FRAME_MAX_BYTES,
    FrameReader,
    FrameTooLargeError,
    InvalidFrameError,
)


def framed(*payloads: bytes) -> bytes:
    return b"".join(SIZE_PREFIX.pack(len(p)) + p for p in payloads)


def drain(reader: FrameReader) -> list[bytes]:
    frames = []
    while (frame := reader.next_frame()) is not None:
        frames.append(bytes(frame))
    return frames


def feed_in_pieces(reader: FrameReader, stream: bytes, cuts: list[int]) -> list[bytes]:
    frames = []
    start = 0
    for cut in sorted(set(cuts)) + [len(stream)]:
        reader.receive_data(stream[start:cut])
        start = cut
        frames.extend(drain(reader))
    return frames


def short_reads(stream: bytes, sizes: list[int]):
    """A recv_into that delivers at most the next of `sizes` bytes per call, like a socket under load."""
    source = io.BytesIO(stream)
    sizes = iter(sizes)

    def recv_into(buffer: memoryview) -> int:
        limit = next(sizes, len(buffer))
        return source.readinto(buffer[: max(1, min(limit, len(buffer)))])

    return recv_into


def test_one_frame_in_one_piece():
    reader = FrameReader(max_frame_size=100)
    reader.receive_data(framed(b"hello"))
    frame = reader.next_frame()
    assert bytes(frame) == b"hello"
    assert reader.next_frame() is None
    assert reader.buffered_bytes == 0


def test_needs_data_until_the_prefix_and_payload_are_complete():
    reader = FrameReader(max_frame_size=100)
    stream = framed(b"abcdef")
    for i in range(len(stream) - 1):
        reader.receive_data(stream[i : i + 1])
        assert reader.next_frame() is None
    reader.receive_data(stream[-1:])
    assert bytes(reader.next_frame()) == b"abcdef"


def test_empty_payload_is_a_frame():
    reader = FrameReader(max_frame_size=100)
    reader.receive_data(framed(b"", b"x"))
    assert drain(reader) == [b"", b"x"]


def test_frame_of_exactly_the_limit_is_accepted():
    reader = FrameReader(max_frame_size=8)
    reader.receive_data(framed(b"12345678"))
    assert bytes(reader.next_frame()) == b"12345678"


def test_size_over_the_limit_raises_on_the_prefix_alone():
    reader = FrameReader(max_frame_size=8)
    reader.receive_data(SIZE_PREFIX.pack(9))
    with pytest.raises(FrameTooLargeError, match=r"size = 9 larger than 8"):
        reader.next_frame()


def test_negative_size_raises():
    reader = FrameReader(max_frame_size=8)
    reader.receive_data(SIZE_PREFIX.pack(-1) + b"junk")
    with pytest.raises(InvalidFrameError, match=r"size = -1"):
        reader.next_frame()


def test_ascii_garbage_reads_as_an_oversized_frame():
    reader = FrameReader(max_frame_size=104857600)
    reader.receive_data(b"GET / HTTP/1.1\r\n\r\n")
    with pytest.raises(FrameTooLargeError, match=r"size = 1195725856 larger than 104857600"):
        reader.next_frame()


def test_huge_declared_size_is_refused_before_allocating():
    reader = FrameReader(max_frame_size=2**31 - 2)
    tracemalloc.start()
    try:
        reader.receive_data(SIZE_PREFIX.pack(2**31 - 1))
        with pytest.raises(FrameTooLargeError):
            reader.next_frame()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_frame_after_a_big_one_survives_in_the_same_read():
    reader = FrameReader(max_frame_size=1 << 20)
    big = bytes(range(256)) * 1000
    stream = framed(big, b"tail")
    reader.receive_data(stream[:1000])
    assert reader.next_frame() is None
    reader.receive_data(stream[1000:])
    assert drain(reader) == [big, b"tail"]


def test_data_fed_before_taking_a_completed_big_frame_is_kept():
    reader = FrameReader(max_frame_size=1 << 20)
    big = b"b" * 5000
    stream = framed(big, b"next")
    reader.receive_data(stream[:100])
    assert reader.next_frame() is None
    reader.receive_data(stream[100:4 + 5000])
    reader.receive_data(stream[4 + 5000 :])
    assert drain(reader) == [big, b"next"]


def test_big_frame_fed_in_small_pieces_takes_linear_time():
    size = 8 << 20
    reader = FrameReader(max_frame_size=size)
    stream = framed(b"\x07" * size)
    started = time.monotonic()
    frames = []
    for start in range(0, len(stream), 512):
        reader.receive_data(stream[start : start + 512])
        frames.extend(drain(reader))
    elapsed = time.monotonic() - started
    assert [len(f) for f in frames] == [size]
    assert elapsed < 5  # a reader that recopies its buffer per piece needs minutes here


def test_receive_into_fills_a_big_frame_in_place():
    size = 1 << 20
    payload = bytes(range(256)) * (size // 256)
    reader = FrameReader(max_frame_size=size)
    recv_into = short_reads(framed(payload, b"after"), [10] + [70000] * 100)
    scratch = memoryview(bytearray(4096))
    targets = []

    def spying_recv_into(buffer: memoryview) -> int:
        targets.append(len(buffer))
        return recv_into(buffer)

    frames = []
    while reader.receive_into(spying_recv_into, scratch):
        frames.extend(drain(reader))
    assert frames == [payload, b"after"]
    assert max(targets) > len(scratch)  # the body went straight into the frame buffer


def test_receive_into_reports_end_of_stream():
    reader = FrameReader(max_frame_size=10)
    assert reader.receive_into(io.BytesIO(b"").readinto, memoryview(bytearray(16))) == 0


payload_lists = st.lists(st.binary(max_size=300), min_size=1, max_size=8)


@given(payloads=payload_lists, data=st.data())
def test_any_split_of_the_stream_yields_the_same_frames(payloads, data):
    stream = framed(*payloads)
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=20))
    assert feed_in_pieces(FrameReader(max_frame_size=300), stream, cuts) == payloads


@given(
    payloads=payload_lists,
    read_sizes=st.lists(st.integers(1, 400), max_size=50),
    scratch_size=st.integers(1, 64),
)
def test_any_sequence_of_short_reads_yields_the_same_frames(payloads, read_sizes, scratch_size):
    stream = framed(*payloads)
    reader = FrameReader(max_frame_size=300)
    recv_into = short_reads(stream, read_sizes)
    scratch = memoryview(bytearray(scratch_size))
    frames = []
    while reader.receive_into(recv_into, scratch):
        frames.extend(drain(reader))
    assert frames == payloads
    assert reader.buffered_bytes == 0


@given(prefix=st.integers(-(2**31), 2**31 - 1), limit=st.integers(0, 1000))
def test_every_prefix_is_either_accepted_or_refused_by_its_sign_and_size(prefix, limit):
    reader = FrameReader(max_frame_size=limit)
    reader.receive_data(SIZE_PREFIX.pack(prefix))
    if prefix < 0:
        with pytest.raises(InvalidFrameError):
            reader.next_frame()
    elif prefix > limit:
        with pytest.raises(FrameTooLargeError):
            reader.next_frame()
    else:
        assert (reader.next_frame() is None) == (prefix > 0)


def test_frames_are_writable_and_independent_of_later_input():
    reader = FrameReader(max_frame_size=1 << 20)
    big = b"B" * 100_000
    reader.receive_data(framed(b"small"))
    small = reader.next_frame()
    reader.receive_data(framed(big)[:1000])
    assert reader.next_frame() is None
    reader.receive_data(framed(big)[1000:] + framed(b"other"))
    large = reader.next_frame()
    small[0:1] = b"S"
    large[0:1] = b"L"
    assert bytes(small) == b"Small" and bytes(large) == b"L" + big[1:]
    assert bytes(reader.next_frame()) == b"other"


def fill_large_frames(reader: FrameReader, payloads: list[bytes], keep: set[int]) -> tuple[list[bytes], list]:
    """Feed each payload in two pieces (so it is filled in place); the frames' bytes, and the views kept."""
    frames, kept = [], []
    for i, payload in enumerate(payloads):
        stream = framed(payload)
        reader.receive_data(stream[:100])
        assert reader.next_frame() is None
        reader.receive_data(stream[100:])
        frame = reader.next_frame()
        frames.append(bytes(frame))
        if i in keep:
            kept.append(frame)
        del frame
    return frames, kept


def test_a_frame_filled_in_place_reuses_the_last_ones_buffer_once_it_is_released():
    reader = FrameReader(max_frame_size=1 << 20)
    payloads = [bytes([i]) * (200_000 - i * 1000) for i in range(4)]
    frames, kept = fill_large_frames(reader, payloads, keep={1})
    assert frames == payloads
    assert bytes(kept[0]) == payloads[1]  # the view held on frame 1 kept its buffer from being filled again
    spare = reader._spare
    fill_large_frames(reader, [b"x" * 150_000], keep=set())
    assert reader._spare is spare  # released, smaller: the same buffer


def test_only_frames_up_to_the_spare_limit_keep_their_buffer():
    reader = FrameReader(max_frame_size=4 << 20)
    fill_large_frames(reader, [b"y" * (SPARE_FRAME_MAX_BYTES + 1)], keep=set())
    assert reader._spare is None
    fill_large_frames(reader, [b"z" * 70_000], keep=set())
    assert len(reader._spare) == 128 * 1024  # rounded up, so that frames of nearby sizes share it
