"""Broken or hostile clients lose their own connection, with a log line naming them; everyone else is served."""

import logging
import socket
import struct

import pytest
from network_helpers import (
    SIZE,
    echo,
    frame,
    is_closed_by_peer,
    recv_exactly,
    request_reply,
    running_broker,
    wait_until,
)

from wirebroker.network.request_channel import Response

MAX_REQUEST = 1000


def client_address(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"{host}:{port}"


def warnings_naming(caplog, sock: socket.socket, reason: str) -> list[str]:
    address = client_address(sock)
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    return [m for m in messages if address in m and reason in m]


@pytest.mark.parametrize(
    ("sent", "reason"),
    [
        (SIZE.pack(MAX_REQUEST + 1), f"size = {MAX_REQUEST + 1} larger than {MAX_REQUEST}"),
        (SIZE.pack(-5) + b"rest", "size = -5"),
        (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", f"size = 1195725856 larger than {MAX_REQUEST}"),
    ],
    ids=["oversized", "negative", "http"],
)
def test_bad_size_prefix_closes_the_connection_with_a_warning(caplog, sent, reason):
    caplog.set_level(logging.WARNING, logger="wirebroker.network")
    with running_broker(socket_request_max_bytes=MAX_REQUEST) as broker:
        with broker.connect() as bad:
            bad.sendall(sent)
            assert is_closed_by_peer(bad)
            assert warnings_naming(caplog, bad, reason)
        with broker.connect() as good:
            assert request_reply(good, b"still served") == b"still served"


def test_good_frame_is_answered_before_a_bad_one_behind_it_closes(caplog):
    caplog.set_level(logging.WARNING, logger="wirebroker.network")
    with running_broker(socket_request_max_bytes=MAX_REQUEST) as broker, broker.connect() as sock:
        sock.sendall(frame(b"fine") + SIZE.pack(2**31 - 1))
        assert recv_exactly(sock, 8) == frame(b"fine")
        assert is_closed_by_peer(sock)
        assert warnings_naming(caplog, sock, f"size = {2**31 - 1} larger than {MAX_REQUEST}")


def test_truncated_frame_then_close_is_cleaned_up(broker):
    with broker.connect() as quitter:
        quitter.sendall(SIZE.pack(100) + b"only ten b")
        wait_until(lambda: broker.server.connection_count == 1)
    wait_until(lambda: broker.server.connection_count == 0)
    with broker.connect() as good:
        assert request_reply(good, b"ok") == b"ok"


def test_reset_while_a_response_is_pending_does_not_disturb_others():
    def slow_big_echo(request):
        return echo(request) if bytes(request.frame) != b"big" else _big_response(request)

    with running_broker(slow_big_echo, socket_send_buffer_bytes=4096) as broker:
        rude = broker.connect()
        rude.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        rude.sendall(frame(b"big"))
        rude.recv(10)
        rude.close()  # RST with most of the response unsent
        with broker.connect() as good:
            assert request_reply(good, b"ok") == b"ok"
        wait_until(lambda: broker.server.connection_count == 0)


def _big_response(request):
    body = b"z" * (8 << 20)
    return Response(request, [SIZE.pack(len(body)), body])


def test_handler_exception_closes_only_that_connection(caplog):
    caplog.set_level(logging.ERROR, logger="wirebroker.network")

    def fragile(request):
        if bytes(request.frame) == b"boom":
            raise ValueError("cannot parse this")
        return echo(request)

    with running_broker(fragile) as broker, broker.connect() as bad, broker.connect() as good:
        assert request_reply(good, b"before") == b"before"
        bad.sendall(frame(b"boom"))
        assert is_closed_by_peer(bad)
        errors = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert any(client_address(bad) in r.getMessage() and r.exc_info for r in errors)
        assert request_reply(good, b"after") == b"after"


def test_response_to_a_connection_that_has_none_pending_closes_it(caplog):
    caplog.set_level(logging.ERROR, logger="wirebroker.network")
    channel_box = []

    def answers_twice(request):
        channel_box[0].send_response(echo(request))
        return echo(request)

    with running_broker(answers_twice, num_io_threads=1) as broker, broker.connect() as sock:
        channel_box.append(broker.channel)
        sock.sendall(frame(b"x"))
        assert sock.recv(100) == frame(b"x")
        assert is_closed_by_peer(sock)
        assert any("awaits one" in r.getMessage() for r in caplog.records)
