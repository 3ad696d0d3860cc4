"""RequestChannel and HandlerPool without sockets: queue bounds, wake-ups, routing, inline handling, shutdown."""

import logging
import threading

import pytest

from wirebroker.network.handler_pool import HandlerPool
from wirebroker.network.request_channel import Request, RequestChannel, Response


class ProcessorStandIn:
    """What the channel needs of a network processor: an id, a response inbox and a wake-up."""

    def __init__(self, processor_id: int) -> None:
        self.id = processor_id
        self.responses: list[Response] = []
        self.wakeups = 0
        self.got_response = threading.Event()

    def enqueue_response(self, response: Response) -> None:
        self.responses.append(response)
        self.got_response.set()

    def wakeup(self) -> None:
        self.wakeups += 1


def make_request(payload: bytes = b"x", processor: int = 0) -> Request:
    return Request(processor, f"conn-{payload!r}", "127.0.0.1:1234", memoryview(payload), 0)


def test_full_queue_refuses_and_wakes_the_refused_processor_when_a_slot_frees():
    channel = RequestChannel(max_queued=2)
    refused, other = ProcessorStandIn(0), ProcessorStandIn(1)
    channel.register_processor(refused)
    channel.register_processor(other)
    assert channel.send_request(make_request(b"a"))
    assert channel.send_request(make_request(b"b"))
    assert not channel.send_request(make_request(b"c", processor=0))
    assert channel.queue_size == 2 and refused.wakeups == 0

    assert bytes(channel.receive_request(timeout=0).frame) == b"a"
    assert (refused.wakeups, other.wakeups) == (1, 0)
    assert bytes(channel.receive_request(timeout=0).frame) == b"b"
    assert refused.wakeups == 1  # woken once per refusal


def test_receive_request_times_out_when_empty():
    assert RequestChannel().receive_request(timeout=0.01) is None


def test_responses_go_to_the_processor_of_their_request():
    channel = RequestChannel()
    first, second = ProcessorStandIn(0), ProcessorStandIn(1)
    channel.register_processor(first)
    channel.register_processor(second)
    response = Response(make_request(processor=1), [b"r"])
    channel.send_response(response)
    assert second.responses == [response] and first.responses == []


def test_response_for_a_stopped_processor_is_dropped():
    channel = RequestChannel()
    channel.register_processor(ProcessorStandIn(0))
    channel.unregister_processor(0)
    channel.send_response(Response(make_request(), [b"r"]))  # must not raise


def test_processor_ids_are_unique():
    channel = RequestChannel()
    channel.register_processor(ProcessorStandIn(0))
    with pytest.raises(ValueError, match="already registered"):
        channel.register_processor(ProcessorStandIn(0))


def test_inline_handler_runs_in_send_request_and_can_be_removed():
    channel = RequestChannel(max_queued=1)
    handled = []
    channel.set_inline_handler(handled.append)
    for payload in (b"a", b"b", b"c"):  # more than the queue holds: inline handling never refuses
        assert channel.send_request(make_request(payload))
    assert [bytes(r.frame) for r in handled] == [b"a", b"b", b"c"] and channel.queue_size == 0
    channel.set_inline_handler(None)
    assert channel.send_request(make_request(b"d")) and channel.queue_size == 1


def test_pool_answers_and_turns_handler_exceptions_into_a_close(caplog):
    caplog.set_level(logging.ERROR, logger="wirebroker.network")
    channel = RequestChannel()
    processor = ProcessorStandIn(0)
    channel.register_processor(processor)

    def handler(request):
        if bytes(request.frame) == b"bad":
            raise RuntimeError("handler bug")
        return Response(request, [request.frame])

    pool = HandlerPool(channel, handler, num_threads=2)
    pool.start()
    channel.send_request(make_request(b"good"))
    channel.send_request(make_request(b"bad"))
    pool.shutdown()  # handles what was queued before stopping
    by_payload = {bytes(r.request.frame): r for r in processor.responses}
    assert by_payload[b"good"].parts == [memoryview(b"good")] and not by_payload[b"good"].close_connection
    assert by_payload[b"bad"].parts is None and by_payload[b"bad"].close_connection
    assert any("127.0.0.1:1234" in r.getMessage() and r.exc_info for r in caplog.records)


def test_pool_sends_nothing_for_a_deferred_response():
    channel = RequestChannel()
    processor = ProcessorStandIn(0)
    channel.register_processor(processor)
    pool = HandlerPool(channel, lambda request: None, num_threads=1)
    pool.start()
    channel.send_request(make_request())
    pool.shutdown()
    assert processor.responses == []


def test_inline_pool_handles_requests_queued_before_it_started():
    channel = RequestChannel()
    processor = ProcessorStandIn(0)
    channel.register_processor(processor)
    channel.send_request(make_request(b"early"))
    pool = HandlerPool(channel, lambda request: Response(request, [b"ok"]), num_threads=0)
    pool.start()
    assert [bytes(r.request.frame) for r in processor.responses] == [b"early"]
    channel.send_request(make_request(b"late"))
    assert [bytes(r.request.frame) for r in processor.responses] == [b"early", b"late"]
    pool.shutdown()
    channel.send_request(make_request(b"after"))
    assert len(processor.responses) == 2 and channel.queue_size == 1
