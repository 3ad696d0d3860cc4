"""One request in flight per connection: responses keep request order; "send nothing" and deferred responses."""

import threading
import time

import pytest
from network_helpers import SIZE, echo, frame, recv_frame, request_reply, running_broker

from wirebroker.network.request_channel import Response

PIPELINED = 8


class InFlightCounter:
    """Handler that answers late for early requests and records how many it held at once per connection."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._in_flight: dict[str, int] = {}
        self.most_in_flight = 0

    def __call__(self, request):
        with self._lock:
            count = self._in_flight.get(request.connection_id, 0) + 1
            self._in_flight[request.connection_id] = count
            self.most_in_flight = max(self.most_in_flight, count)
        index = int(bytes(request.frame).split(b"-")[1])
        time.sleep((PIPELINED - index) * 0.005)  # the first request takes longest
        with self._lock:
            self._in_flight[request.connection_id] -= 1
        return echo(request)


@pytest.mark.parametrize("num_io_threads", [0, 4])
def test_pipelined_requests_are_answered_in_order_one_at_a_time(num_io_threads):
    handler = InFlightCounter()
    with running_broker(handler, num_io_threads=num_io_threads) as broker:
        with broker.connect() as one, broker.connect() as other:
            for sock, name in ((one, b"one"), (other, b"other")):
                sock.sendall(b"".join(frame(b"%s-%d" % (name, i)) for i in range(PIPELINED)))
            assert [recv_frame(one) for _ in range(PIPELINED)] == [b"one-%d" % i for i in range(PIPELINED)]
            assert [recv_frame(other) for _ in range(PIPELINED)] == [b"other-%d" % i for i in range(PIPELINED)]
    assert handler.most_in_flight == 1


@pytest.mark.parametrize("num_io_threads", [0, 2])
def test_no_response_unmutes_the_connection(num_io_threads):
    def silent_for_acks0(request):
        if bytes(request.frame).startswith(b"acks=0"):
            return Response(request, parts=None)
        return echo(request)

    with running_broker(silent_for_acks0, num_io_threads=num_io_threads) as broker, broker.connect() as sock:
        sock.sendall(frame(b"acks=0 first") + frame(b"acks=0 second") + frame(b"answered"))
        assert recv_frame(sock) == b"answered"
        sock.sendall(frame(b"acks=0 later"))
        assert request_reply(sock, b"again") == b"again"


@pytest.mark.parametrize("num_io_threads", [0, 2])
def test_deferred_response_sent_later_from_another_thread(num_io_threads):
    channel_box = []

    def park_then_answer(request):
        # As a purgatory would: return None now, answer later from a thread of its own.
        threading.Timer(0.05, lambda: channel_box[0].send_response(echo(request))).start()

    with running_broker(park_then_answer, num_io_threads=num_io_threads) as broker:
        channel_box.append(broker.channel)
        with broker.connect() as sock:
            sock.sendall(frame(b"first") + frame(b"second"))
            assert [recv_frame(sock), recv_frame(sock)] == [b"first", b"second"]


def test_inline_mode_handles_on_the_network_thread():
    thread_names = []

    def recording(request):
        thread_names.append(threading.current_thread().name)
        return echo(request)

    with running_broker(recording, num_io_threads=0) as broker, broker.connect() as sock:
        assert request_reply(sock, b"x") == b"x"
    assert thread_names == ["wirebroker-network-thread-0"]


def test_many_small_parts_arrive_in_order():
    parts_count = 3000  # more than one sendmsg may gather (IOV_MAX)

    def many_parts(request):
        parts = [b"%05d" % i for i in range(parts_count)]
        return Response(request, [SIZE.pack(5 * parts_count), *parts])

    with running_broker(many_parts) as broker, broker.connect() as sock:
        assert request_reply(sock, b"x") == b"".join(b"%05d" % i for i in range(parts_count))
