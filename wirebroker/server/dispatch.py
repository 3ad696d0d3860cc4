"""API dispatch: request frame -> header -> API module -> response frame (Kafka's KafkaApis, minus the 60-arm match).

Each module under `wirebroker/apis/` serves one API and registers it in `apis/registry.py` with its versions;
its `handle(ctx, request)` returns the response message, `NO_RESPONSE`, or None when it will answer later through
`ctx.respond` (a request parked in purgatory).

Errors: bytes that do not decode close the connection with a log line naming the client and the reason (Kafka
does the same). A request for an API or version the broker does not serve (its own table, or an emulated Kafka
release's: apis/emulation.py) gets UNSUPPORTED_VERSION where the response has a top-level error code, and otherwise
the connection is closed. A Kafka error escaping a handler becomes the response's top-level error code the same way;
anything else is logged as a bug and answered with UNKNOWN_SERVER_ERROR.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from wirebroker.apis import api_versions
from wirebroker.apis.context import NO_RESPONSE, BrokerServices, CloseConnection, RequestContext
from wirebroker.apis.emulation import ApiTable, api_table
from wirebroker.apis.registry import SERVED, Api
from wirebroker.network.request_channel import Request, RequestChannel, Response
from wirebroker.protocol.api_messages import broker_request_class, response_class
from wirebroker.protocol.encoded import EncodedAnswer
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.headers import (
    API_VERSIONS_KEY,
    RequestHeader,
    read_request_header,
    response_frame_parts,
)
from wirebroker.protocol.message import Message
from wirebroker.protocol.messages import API_SPECS
from wirebroker.protocol.primitives import DecodeError, UnsupportedFieldError
from wirebroker.server import request_log

log = logging.getLogger(__name__)


def error_response(api_key: int, code: int) -> Message | None:
    """A response carrying `code` at the top level, or None when the response has no top-level error code."""
    response = response_class(api_key)()
    if not hasattr(response, "error_code"):
        return None
    response.error_code = code
    return response


class _AnswerNow:
    """Routes `ctx.respond`: kept for the dispatcher while the handler runs, sent through the channel after.

    A purgatory may complete a request on another thread before its handler has returned; the lock makes the
    answer go out exactly once, one way or the other. One object per request carries what turns the answer into
    a Response (`finish`, or the dispatcher's encoding), so that no closure is built per request.
    """

    __slots__ = ("_lock", "_handling", "_answer", "_dispatcher", "_request", "_header", "_finish")

    def __init__(self, dispatcher: Dispatcher, request: Request, header: RequestHeader,
                 finish: Callable[[Any], Response | None] | None) -> None:
        self._lock = threading.Lock()
        self._handling = True
        self._answer: Any = None
        self._dispatcher = dispatcher
        self._request = request
        self._header = header
        self._finish = finish

    def respond(self, answer: Any) -> None:
        with self._lock:
            if self._handling:
                self._answer = answer
                return
        response = self.finish(answer)
        if response is not None:
            self._dispatcher.channel.send_response(response)

    def handler_returned(self) -> Any:
        """The answer given while the handler ran, or None if it is still to come."""
        with self._lock:
            self._handling = False
            return self._answer

    def finish(self, answer: Any) -> Response | None:
        """The Response for the handler's answer: `finish`'s, or by default the answer encoded."""
        if self._finish is not None:
            return self._finish(answer)
        return self._dispatcher._response(self._request, self._header, answer)


class Dispatcher:
    def __init__(self, broker: BrokerServices, channel: RequestChannel, table: ApiTable | None = None) -> None:
        self.broker = broker
        self.channel = channel
        self.table = table or api_table()  # the versions requests may use: the registry's, or an emulated release's
        # API key -> its request class, at the API's first request: a codec module loads when a client needs it
        self._request_classes: dict[int, type[Message]] = {}
        self.faults: Any = None  # a FaultInjector (server/faults.py) while a test has fault rules set, else None
        # A RequestMetrics (server/web/request_metrics.py) while the HTTP port is on, else None: one check per answer.
        self.request_metrics: Any = None
        # ClientQuotaManagers (server/quota_managers.py) while a client quota is set (server/broker.py), else None.
        self.quotas: Any = None
        self.log_requests = request_log.enabled()

    def __call__(self, request: Request) -> Response | None:
        try:
            header, body_start = read_request_header(request.frame)
        except DecodeError as exc:
            return self._close(request, f"unreadable request header ({exc})")
        api = SERVED.get(header.api_key)
        versions = self.table.served.get(header.api_key)
        if api is None or versions is None or not versions[0] <= header.api_version <= versions[1]:
            if header.api_key == API_VERSIONS_KEY:
                if self.log_requests:
                    request_log.log_completed(request, header)
                return self._send(request, header, api_versions.unsupported_version_response(self.table), version=0)
            return self._refuse(request, header)
        request_type = self._request_classes.get(header.api_key)
        if request_type is None:
            request_type = self._request_classes[header.api_key] = broker_request_class(header.api_key)
        try:
            body, _ = request_type.read(request.frame, body_start, header.api_version)
        except DecodeError as exc:
            return self._close(request, f"malformed {API_SPECS[header.api_key].name} v{header.api_version} ({exc})")
        if self.faults is not None:
            return self.faults.dispatch(self, request, header, api, body)
        return self.handle(request, header, api, body)

    def handle(self, request: Request, header: RequestHeader, api: Api, body: Message,
               finish: Callable[[Any], Response | None] | None = None) -> Response | None:
        """Run the API's handler on a decoded request. `finish` turns its answer (now or later) into the Response
        to send, None for none yet; by default the answer is encoded (fault injection shapes, delays or drops it)."""
        if self.quotas is not None:
            from wirebroker.server.request_throttling import throttled  # loaded once a quota is set

            finish = throttled(self.quotas, request, header, body,
                               finish or (lambda answer: self._response(request, header, answer)))
        answer_now = _AnswerNow(self, request, header, finish)
        ctx = RequestContext(
            header=header,
            client_address=request.client_address,
            connection_id=request.connection_id,
            listener=request.listener,
            broker=self.broker,
            respond=answer_now.respond,
            principal=request.principal,
            security_protocol=request.security_protocol,
        )
        try:
            answer = api.handle(ctx, body)
            if answer is None:
                answer = answer_now.handler_returned()
                if answer is None:
                    return None
        except Exception as exc:  # noqa: BLE001  (the API boundary: every failure is an answer, _failed logs it)
            answer = exc
        return answer_now.finish(answer)

    def _response(self, request: Request, header: RequestHeader, answer: Any) -> Response:
        """The frame for a handler's answer: a response, NO_RESPONSE, CloseConnection, or the exception it failed
        with (a handler answering later, through `ctx.respond`, from a thread of its own)."""
        if self.request_metrics is not None:
            self.request_metrics.record(header.api_key, header.api_version, request.received_ns)
        if self.log_requests:
            request_log.log_completed(request, header)
        if answer is NO_RESPONSE:
            return Response(request, None)
        if isinstance(answer, CloseConnection):
            return self._close(request, answer.reason)
        if isinstance(answer, Exception):
            return self._failed(request, header, answer)
        return self._send(request, header, answer)

    def _failed(self, request: Request, header: RequestHeader, exc: Exception) -> Response:
        """A KafkaError is its code at the top level of the response; anything else is UNKNOWN_SERVER_ERROR."""
        name = API_SPECS[header.api_key].name
        if isinstance(exc, KafkaError):
            log.info("%s v%d from %s (client id %r) failed: %s", name, header.api_version, request.client_address,
                     header.client_id, exc)
            return self._error(request, header, exc.code)
        log.error("%s v%d from %s (client id %r) raised; answering UNKNOWN_SERVER_ERROR", name, header.api_version,
                  request.client_address, header.client_id, exc_info=exc)
        return self._error(request, header, ErrorCode.UNKNOWN_SERVER_ERROR)

    def _send(self, request: Request, header: RequestHeader, body: Message | EncodedAnswer,
              version: int | None = None) -> Response:
        try:
            return Response(request, response_frame_parts(header, body, version))
        except UnsupportedFieldError as exc:
            log.error("cannot encode the %s v%d answer to %s: %s", API_SPECS[header.api_key].name,
                      header.api_version, request.client_address, exc)
            return self._close(request, "response not encodable at the requested version")

    def _refuse(self, request: Request, header: RequestHeader) -> Response:
        name = API_SPECS[header.api_key].name if header.api_key in API_SPECS else f"API key {header.api_key}"
        served_by = f"Apache Kafka {self.table.release} (emulated)" if self.table.release else "this broker"
        if header.api_key in API_SPECS:
            response = error_response(header.api_key, ErrorCode.UNSUPPORTED_VERSION)
            if response is not None and API_SPECS[header.api_key].min_version <= header.api_version <= API_SPECS[
                header.api_key
            ].max_version:
                log.info("%s v%d from %s (client id %r) is not served by %s: answering UNSUPPORTED_VERSION", name,
                         header.api_version, request.client_address, header.client_id, served_by)
                return self._send(request, header, response)
        return self._close(request, f"{name} v{header.api_version} (client id {header.client_id!r}) is not served by "
                                    f"{served_by}")

    def _error(self, request: Request, header: RequestHeader, code: int) -> Response:
        response = error_response(header.api_key, code)
        if response is None:
            return self._close(request, f"error {ErrorCode(code).name} and no top-level error code to carry it")
        return self._send(request, header, response)

    def _close(self, request: Request, reason: str) -> Response:
        log.warning("closing connection from %s: %s", request.client_address, reason)
        return Response(request, None, close_connection=True)

