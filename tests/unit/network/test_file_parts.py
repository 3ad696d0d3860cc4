"""Responses made of bytes and file ranges: written in order, file ranges with sendfile, partial writes resumed."""

import logging
import os
import socket
import tempfile
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from network_helpers import SIZE, is_closed_by_peer, recv_exactly, request_reply, running_broker

from wirebroker.network.request_channel import Response
from wirebroker.network.response_send import FilePartError, ResponseSend


@dataclass
class FileRange:
    """Stands in for protocol.records.FileRegion: the duck type the processor sends with os.sendfile."""

    fileno: int
    position: int
    size: int


@pytest.fixture
def data_file(tmp_path):
    content = os.urandom(12 << 20)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(content)
    with open(path, "rb") as f:
        yield f.fileno(), content


def respond_with(parts_for):
    def handler(request):
        parts = parts_for(bytes(request.frame))
        size = sum(len(p) if isinstance(p, bytes) else p.size for p in parts)
        return Response(request, [SIZE.pack(size), *parts])

    return handler


def test_bytes_and_file_ranges_arrive_in_order(data_file):
    fd, content = data_file
    parts = [b"head", FileRange(fd, 100, 1000), b"middle", FileRange(fd, 0, 10), FileRange(fd, 5000, 0), b"tail"]
    with running_broker(respond_with(lambda _: parts)) as broker, broker.connect() as sock:
        expected = b"head" + content[100:1100] + b"middle" + content[:10] + b"tail"
        assert request_reply(sock, b"fetch") == expected


@pytest.mark.parametrize("num_io_threads", [0, 2])
def test_file_range_bigger_than_the_socket_buffer_arrives_byte_exact(data_file, num_io_threads):
    fd, content = data_file
    start, size = 12345, 10 << 20
    handler = respond_with(lambda payload: [FileRange(fd, start, size)] if payload == b"fetch" else [payload])
    with running_broker(handler, num_io_threads=num_io_threads, socket_send_buffer_bytes=16384) as broker:
        with broker.connect() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
            sock.sendall(SIZE.pack(5) + b"fetch")
            (length,) = SIZE.unpack(recv_exactly(sock, 4))
            assert length == size
            assert recv_exactly(sock, size) == content[start : start + size]
            assert request_reply(sock, b"next") == b"next"  # the connection was unmuted after the big send


def test_unreadable_file_part_closes_the_connection_with_a_warning(caplog, tmp_path):
    caplog.set_level(logging.WARNING, logger="wirebroker.network")
    directory_fd = os.open(tmp_path, os.O_RDONLY)  # sendfile cannot read a directory
    try:
        handler = respond_with(lambda payload: [FileRange(directory_fd, 0, 10)] if payload == b"bad" else [payload])
        with running_broker(handler) as broker, broker.connect() as bad, broker.connect() as good:
            bad.sendall(SIZE.pack(3) + b"bad")
            assert recv_exactly(bad, 4) == SIZE.pack(10)
            assert is_closed_by_peer(bad)
            host, port = bad.getsockname()
            assert any(f"{host}:{port}" in r.getMessage() and "sendfile" in r.getMessage() for r in caplog.records)
            assert request_reply(good, b"ok") == b"ok"
    finally:
        os.close(directory_fd)


def test_file_range_past_the_end_of_its_file_closes_the_connection(caplog, data_file):
    caplog.set_level(logging.WARNING, logger="wirebroker.network")
    fd, content = data_file
    handler = respond_with(lambda _: [FileRange(fd, len(content) - 10, 20)])
    with running_broker(handler) as broker, broker.connect() as sock:
        sock.sendall(SIZE.pack(1) + b"x")
        assert recv_exactly(sock, 4 + 10) == SIZE.pack(20) + content[-10:]
        assert is_closed_by_peer(sock)
        assert any("10 bytes before the range" in r.getMessage() for r in caplog.records)


# -- ResponseSend against a socketpair with a tiny buffer: every write is partial -------------------------------

part_specs = st.lists(
    st.one_of(
        st.binary(min_size=0, max_size=3000).map(lambda b: ("bytes", b)),
        st.tuples(st.integers(0, 20000), st.integers(0, 20000)).map(lambda t: ("file", t)),
    ),
    max_size=12,
)


@settings(max_examples=40, deadline=None)
@given(specs=part_specs, read_sizes=st.lists(st.integers(1, 9000), min_size=1, max_size=20))
def test_partial_writes_resume_where_they_stopped(specs, read_sizes):
    content = os.urandom(40000)
    with tempfile.TemporaryFile() as f:
        f.write(content)
        f.flush()
        parts, expected = [], b""
        for kind, spec in specs:
            if kind == "bytes":
                parts.append(spec)
                expected += spec
            else:
                position, size = spec
                parts.append(FileRange(f.fileno(), position, size))
                expected += content[position : position + size]
        assert drain_through_socketpair(ResponseSend(parts), read_sizes) == expected


def drain_through_socketpair(send: ResponseSend, read_sizes: list[int]) -> bytes:
    writer, reader = socket.socketpair()
    with writer, reader:
        writer.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        writer.setblocking(False)
        received = bytearray()
        turn = 0
        while not send.write_to(writer):
            received += reader.recv(read_sizes[turn % len(read_sizes)])
            turn += 1
        writer.shutdown(socket.SHUT_WR)
        while chunk := reader.recv(65536):
            received += chunk
        return bytes(received)


def test_send_of_a_truncated_file_range_raises():
    with tempfile.TemporaryFile() as f:
        f.write(b"0123456789")
        f.flush()
        with pytest.raises(FilePartError, match="5 bytes before"):
            drain_through_socketpair(ResponseSend([FileRange(f.fileno(), 5, 10)]), [100])
