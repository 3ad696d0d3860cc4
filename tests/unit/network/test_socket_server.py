"""SocketServer end to end: binding, serving, request fields, connection limits, shutdown."""

import socket
import threading

import pytest
from network_helpers import echo, frame, is_closed_by_peer, recv_frame, request_reply, running_broker, wait_until

from wirebroker.network.handler_pool import HandlerPool
from wirebroker.network.listeners import bind_addresses
from wirebroker.network.request_channel import Request, RequestChannel, Response
from wirebroker.network.socket_server import SocketServer


def test_echoes_a_request(broker):
    with broker.connect() as sock:
        assert request_reply(sock, b"hello") == b"hello"
        assert request_reply(sock, b"") == b""


def test_localhost_listener_serves_ipv4_and_ipv6_on_one_port():
    with running_broker(host="localhost") as broker:
        [addresses] = broker.server.bound_addresses()
        assert sorted(host for host, _ in addresses) == ["127.0.0.1", "::1"]
        assert {port for _, port in addresses} == {broker.port}
        for host in ("127.0.0.1", "::1"):
            with broker.connect(host) as sock:
                assert request_reply(sock, host.encode()) == host.encode()


def test_which_addresses_a_listener_host_binds():
    assert bind_addresses("localhost") == [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")]
    assert bind_addresses("127.0.0.1") == [(socket.AF_INET, "127.0.0.1")]
    assert bind_addresses("::1") == [(socket.AF_INET6, "::1")]
    if socket.has_ipv6:
        assert bind_addresses("") == [(socket.AF_INET6, "::")]  # dual stack: IPv4 clients too


def test_several_listeners_each_get_a_port():
    channel = RequestChannel()
    server = SocketServer([("PLAINTEXT", "127.0.0.1", 0), ("INTERNAL", "127.0.0.1", 0)], channel, num_network_threads=1)
    server.start()
    try:
        ports = server.bound_ports()
        assert len(set(ports)) == 2 and all(ports)
    finally:
        server.shutdown()


def test_each_request_names_the_listener_it_came_by():
    channel = RequestChannel()
    seen: list[Request] = []

    def recording(request: Request) -> Response:
        seen.append(request)
        return echo(request)

    pool = HandlerPool(channel, recording, num_threads=1)
    server = SocketServer([("PLAINTEXT", "127.0.0.1", 0), ("INTERNAL", "127.0.0.1", 0)], channel, num_network_threads=1)
    server.start()
    pool.start()
    try:
        for port in server.bound_ports():
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                request_reply(sock, b"x")
    finally:
        server.shutdown()
        pool.shutdown()
    assert [r.listener for r in seen] == ["PLAINTEXT", "INTERNAL"]


def test_binding_a_taken_port_fails_with_the_address():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = SocketServer([("PLAINTEXT", "127.0.0.1", port)], RequestChannel(), num_network_threads=1)
        with pytest.raises(OSError, match=f"127.0.0.1:{port}"):
            server.start()


def test_request_carries_its_connection_and_client():
    seen: list[Request] = []

    def recording(request):
        seen.append(request)
        return echo(request)

    with running_broker(recording, num_network_threads=2) as broker:
        with broker.connect() as first, broker.connect() as second:
            request_reply(first, b"a")
            request_reply(second, b"b")
            request_reply(first, b"c")
            client = "127.0.0.1:%d" % first.getsockname()[1]
    a, b, c = seen
    assert a.client_address == client
    assert a.connection_id == f"127.0.0.1:{broker.port}-{client}-0"
    assert c.connection_id == a.connection_id and b.connection_id != a.connection_id
    assert {a.processor, b.processor} == {0, 1}  # the acceptor deals connections out in turn
    assert bytes(a.frame) == b"a" and a.received_ns <= c.received_ns


def test_many_clients_across_processors_are_all_served():
    with running_broker(num_network_threads=3, num_io_threads=4) as broker:
        clients = [broker.connect() for _ in range(12)]
        try:
            for i, sock in enumerate(clients):
                sock.sendall(frame(b"c%d" % i))
            assert [recv_frame(sock) for sock in clients] == [b"c%d" % i for i in range(12)]
        finally:
            for sock in clients:
                sock.close()


def test_max_connections_makes_the_next_client_wait_for_a_slot():
    with running_broker(max_connections=2) as broker:
        first, second = broker.connect(), broker.connect()
        wait_until(lambda: broker.server.connection_count == 2)
        with broker.connect() as third:  # completes in the kernel's backlog, not yet accepted
            third.sendall(frame(b"third"))
            third.settimeout(0.3)
            with pytest.raises(TimeoutError):
                third.recv(1)
            first.close()
            third.settimeout(5)
            assert recv_frame(third) == b"third"
        second.close()


def test_connection_count_follows_clients(broker):
    with broker.connect() as sock:
        request_reply(sock, b"x")
        assert broker.server.connection_count == 1
    wait_until(lambda: broker.server.connection_count == 0)


def test_shutdown_closes_client_connections_and_stops_threads():
    before = set(threading.enumerate())
    with running_broker() as broker:
        sock = broker.connect()
        request_reply(sock, b"x")
    assert is_closed_by_peer(sock)
    sock.close()
    assert set(threading.enumerate()) <= before
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", broker.port), timeout=1)


def test_shutdown_twice_is_harmless():
    with running_broker() as broker:
        pass
    broker.server.shutdown()
    broker.pool.shutdown()


def test_response_with_close_connection_is_sent_then_the_connection_closed():
    def answer_then_close(request):
        return Response(request, [frame(b"bye")], close_connection=True)

    with running_broker(answer_then_close) as broker, broker.connect() as sock:
        assert request_reply(sock, b"x") == b"bye"
        assert is_closed_by_peer(sock)
