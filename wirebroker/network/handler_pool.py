"""Request handler threads (Kafka's KafkaRequestHandlerPool, num.io.threads of them).

Each thread takes requests from the RequestChannel, calls `handler(request)` and sends back what it returns:
- a Response: sent now (through the channel to the request's processor);
- None: the handler has taken charge of answering later with `channel.send_response` (a request parked in
  purgatory, e.g. produce with acks=all or a fetch waiting for min_bytes).
An exception escaping the handler is logged with the client's address and closes the connection; turning Kafka
errors into error codes is the dispatcher's job, so anything reaching here is a bug or a request beyond repair.

num_threads=0 handles every request inline, on the network thread that read it: no queue and no thread hand-off,
which under the GIL may well be the faster choice; the benchmarks decide the default.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from wirebroker.network.request_channel import Request, RequestChannel, Response

log = logging.getLogger(__name__)

NUM_IO_THREADS = 8  # Kafka's default num.io.threads

Handler = Callable[[Request], Response | None]


class HandlerPool:
    def __init__(self, channel: RequestChannel, handler: Handler, num_threads: int = NUM_IO_THREADS) -> None:
        if num_threads < 0:
            raise ValueError(f"num.io.threads must be >= 0, got {num_threads}")
        self._channel = channel
        self._handler = handler
        self._num_threads = num_threads
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        if self._num_threads == 0:
            self._channel.set_inline_handler(self.handle)
            # Requests queued before the inline handler was in place would otherwise wait forever.
            while (request := self._channel.receive_request(timeout=0)) is not None:
                self.handle(request)
            return
        self._threads = [
            threading.Thread(target=self._run, name=f"wirebroker-request-handler-{i}", daemon=True)
            for i in range(self._num_threads)
        ]
        for thread in self._threads:
            thread.start()

    def shutdown(self) -> None:
        """Let each thread finish the requests queued before this call, then stop; safe to call more than once."""
        if self._num_threads == 0:
            self._channel.set_inline_handler(None)
            return
        self._channel.send_shutdown_requests(len(self._threads))
        for thread in self._threads:
            thread.join()
        self._threads = []

    def handle(self, request: Request) -> None:
        """Handle one request and send its response, if it has one now."""
        try:
            response = self._handler(request)
        except Exception:
            log.exception("Error handling a request from %s (connection id %s); closing the connection",
                          request.client_address, request.connection_id)
            response = Response(request, parts=None, close_connection=True)
        if response is not None:
            self._channel.send_response(response)

    def _run(self) -> None:
        while True:
            request = self._channel.receive_request()
            if request is None:
                return
            self.handle(request)
            # Not held while waiting for the next one: the connection's frame reader refills the frame's buffer
            # only once no view of it is left (protocol/frames.py).
            del request
