"""connections.max.idle.ms, and many idle connections held at once."""

import time

from network_helpers import is_closed_by_peer, request_reply, running_broker, wait_until


def test_idle_connection_is_closed_and_an_active_one_kept():
    with running_broker(connections_max_idle_ms=300) as broker:
        with broker.connect() as idle, broker.connect() as active:
            started = time.monotonic()
            for i in range(6):  # active for 0.6 s, twice the idle limit
                assert request_reply(active, b"%d" % i) == b"%d" % i
                time.sleep(0.1)
            assert is_closed_by_peer(idle, timeout=0.1)
            assert time.monotonic() - started >= 0.3
            assert request_reply(active, b"still open") == b"still open"


def test_idle_close_waits_for_the_limit():
    with running_broker(connections_max_idle_ms=400) as broker, broker.connect() as sock:
        assert not is_closed_by_peer(sock, timeout=0.25)
        assert is_closed_by_peer(sock, timeout=2)


def test_a_thousand_idle_connections_then_a_request_is_answered():
    count = 1000
    with running_broker(num_network_threads=2, socket_listen_backlog_size=1024) as broker:
        idle = []
        try:
            for _ in range(count):
                idle.append(broker.connect())
            wait_until(lambda: broker.server.connection_count == count)
            with broker.connect() as sock:
                assert request_reply(sock, b"hello") == b"hello"
            assert request_reply(idle[0], b"first") == b"first"
            assert request_reply(idle[-1], b"last") == b"last"
        finally:
            for sock in idle:
                sock.close()
        wait_until(lambda: broker.server.connection_count == 0)


def test_negative_idle_limit_never_closes():
    with running_broker(connections_max_idle_ms=-1) as broker, broker.connect() as sock:
        assert not is_closed_by_peer(sock, timeout=0.3)
        assert request_reply(sock, b"x") == b"x"
