"""The dispatcher's answers for handlers that fail: now (raised) or later (given to `ctx.respond` from a thread)."""

from __future__ import annotations

import queue
import struct
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest

from wirebroker.network.request_channel import Request, RequestChannel, Response
from wirebroker.protocol.errors import CoordinatorLoadInProgressError, ErrorCode
from wirebroker.protocol.headers import request_header_version
from wirebroker.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from wirebroker.protocol.messages.request_header import RequestHeader
from wirebroker.server.dispatch import Dispatcher

HEARTBEAT_V4 = 4


class _Processor:
    """The network processor's side of the channel: collects the responses routed to it."""

    id = 0

    def __init__(self) -> None:
        self.responses: queue.Queue[Response] = queue.Queue()

    def enqueue_response(self, response: Response) -> None:
        self.responses.put(response)

    def wakeup(self) -> None:
        pass


def _heartbeat_request() -> Request:
    header = RequestHeader(request_api_key=HeartbeatRequest.API_KEY, request_api_version=HEARTBEAT_V4,
                           correlation_id=7, client_id="test")
    frame = header.encode(request_header_version(HeartbeatRequest.API_KEY, HEARTBEAT_V4)) + HeartbeatRequest(
        group_id="g", generation_id=1, member_id="m").encode(HEARTBEAT_V4)
    return Request(processor=0, connection_id="c", client_address="127.0.0.1:1", frame=memoryview(bytearray(frame)),
                   received_ns=0)


def _heartbeat_error(response: Response) -> int:
    assert not response.close_connection
    frame = b"".join(bytes(part) for part in response.parts)
    (correlation_id,) = struct.unpack_from(">i", frame, 4)
    assert correlation_id == 7
    return HeartbeatResponse.decode(frame[9:], HEARTBEAT_V4).error_code  # size, correlation id, empty tagged fields


@pytest.mark.parametrize(("failure", "code"), [
    (CoordinatorLoadInProgressError("loading"), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
    (RuntimeError("a bug"), ErrorCode.UNKNOWN_SERVER_ERROR),
])
def test_a_group_request_failing_on_the_group_thread_is_answered_with_its_code(failure, code):
    def heartbeat(request):
        raise failure

    with ThreadPoolExecutor(max_workers=1) as group_requests:
        broker = SimpleNamespace(group_requests=group_requests, group_coordinator=SimpleNamespace(heartbeat=heartbeat),
                                 authorizer=None)
        channel = RequestChannel()
        processor = _Processor()
        channel.register_processor(processor)
        # The group thread's answer comes back through the channel, or straight back if it beat the handler's return.
        response = Dispatcher(broker, channel)(_heartbeat_request()) or processor.responses.get(timeout=5)
        assert _heartbeat_error(response) == code
