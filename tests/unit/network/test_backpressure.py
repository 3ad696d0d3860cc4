"""A full request queue pauses reading instead of dropping requests, and reading resumes when it drains."""

import threading
import time

from network_helpers import SIZE, Gate, echo, frame, is_closed_by_peer, recv_frame, running_broker, wait_until


def test_full_queue_pauses_reads_until_a_handler_takes_a_request():
    gate = Gate()

    def gated_echo(request):
        gate.pass_through(request)
        return echo(request)

    with running_broker(gated_echo, num_io_threads=1, max_queued=1) as broker:
        a, b, c, d = (broker.connect() for _ in range(4))
        try:
            a.sendall(frame(b"a"))
            wait_until(lambda: gate.arrived == [b"a"])  # the only handler thread is now held
            b.sendall(frame(b"b"))
            wait_until(lambda: broker.channel.queue_size == 1)  # the queue is full
            c.sendall(frame(b"c"))  # refused by the queue: the processor keeps it and stops reading
            time.sleep(0.2)
            d.sendall(SIZE.pack(-1))  # would close d at once if it were read
            assert not is_closed_by_peer(d, timeout=0.3)
            assert broker.channel.queue_size == 1 and gate.arrived == [b"a"]

            gate.open()
            assert [recv_frame(a), recv_frame(b), recv_frame(c)] == [b"a", b"b", b"c"]
            assert is_closed_by_peer(d)  # reading resumed
            assert gate.arrived == [b"a", b"b", b"c"]
        finally:
            for sock in (a, b, c, d):
                sock.close()


def test_nothing_is_dropped_when_many_clients_overrun_a_tiny_queue():
    lock = threading.Lock()
    handled = []

    def slow_echo(request):
        time.sleep(0.001)
        with lock:
            handled.append(bytes(request.frame))
        return echo(request)

    with running_broker(slow_echo, num_io_threads=1, max_queued=2, num_network_threads=2) as broker:
        clients = [broker.connect() for _ in range(10)]
        try:
            for i, sock in enumerate(clients):
                sock.sendall(b"".join(frame(b"%d-%d" % (i, j)) for j in range(5)))
            for i, sock in enumerate(clients):
                assert [recv_frame(sock) for _ in range(5)] == [b"%d-%d" % (i, j) for j in range(5)]
        finally:
            for sock in clients:
                sock.close()
    assert len(handled) == 50
