"""A network thread (Kafka's Processor): one `selectors` loop serving the connections the acceptor hands it.

Per connection, as in Kafka:
- read size-prefixed frames; once a whole request is read the connection is muted (no more reads) until its
  response is written or a "send nothing" response arrives, so there is one request in flight per connection and
  responses keep request order. Pipelined bytes already read wait in the frame reader and are looked at on unmute.
- a frame with a negative size or one over socket.request.max.bytes, or any other error on one connection, closes
  that connection with a log line naming the client; the loop and the other connections carry on.
- a connection with no bytes read or written for connections.max.idle.ms is closed (a negative value: never,
  as in Kafka's Selector).

Back-pressure: a request refused by the full request queue is kept here and reads stop on every connection of this
processor until the channel has room again (it wakes this thread when a handler takes a request).

Threads: `accept`, `enqueue_response`, `wakeup` and `stop` may be called from any thread; everything else runs on
this processor's own thread, so connection state needs no lock.
"""

from __future__ import annotations

import logging
import heapq
import itertools
import selectors
import socket
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Mapping
from typing import Any

from wirebroker.network.connection import Connection, SecurityClose
from wirebroker.network.connection_quotas import ConnectionQuotas
from wirebroker.network.request_channel import Request, RequestChannel, Response
from wirebroker.network.response_send import FilePartError, ResponseSend
from wirebroker.network.wakeup import Wakeup
from wirebroker.protocol.frames import FrameError

log = logging.getLogger(__name__)

READ_CHUNK = 64 * 1024  # bytes asked of one recv; bodies with more than this left are read straight into place
MAX_POLL_SECONDS = 0.3  # Kafka's processor polls for at most 300 ms before looking at its queues again

_READ, _WRITE = selectors.EVENT_READ, selectors.EVENT_WRITE


class Processor(threading.Thread):
    def __init__(
        self,
        processor_id: int,
        channel: RequestChannel,
        quotas: ConnectionQuotas,
        *,
        max_request_size: int,
        connections_max_idle_ms: int,
        listener_security: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(name=f"wirebroker-network-thread-{processor_id}", daemon=True)
        self.id = processor_id
        self._channel = channel
        self._quotas = quotas
        self._max_request_size = max_request_size
        self._connections_max_idle_ms = connections_max_idle_ms
        # listener name -> its ListenerSecurity (network/channel_security.py); PLAINTEXT listeners have none
        self._listener_security = listener_security or {}
        self._selector = selectors.DefaultSelector()
        self._wakeup = Wakeup()
        self._wakeup.register(self._selector)
        self._new_connections: deque[tuple[socket.socket, str]] = deque()
        self._responses: deque[Response] = deque()
        # Failed authentications, answered once their delay is over (Kafka's connection.failed.authentication.delay.ms
        # slows password guessing): (when, sequence, response), earliest first.
        self._delayed: list[tuple[float, int, Response]] = []
        self._delayed_sequence = itertools.count()
        # Connections muted for their client's quota after a response (KIP-219): (until, sequence, connection).
        self._throttled: list[tuple[float, int, Connection]] = []
        self._connections: OrderedDict[str, Connection] = OrderedDict()  # least recently active first
        self._waiting: deque[Connection] = deque()  # their requests were refused by a full queue, oldest first
        self._reads_paused = False
        self._scratch = memoryview(bytearray(READ_CHUNK))
        self._next_connection_index = 0
        self._running = True
        self._thread_ident: int | None = None
        self._now = time.monotonic()

    # -- called from other threads -------------------------------------------------------------------------------

    def accept(self, sock: socket.socket, listener: str) -> None:
        """Take over a freshly accepted, non-blocking socket of `listener` (already counted in the connection
        quotas)."""
        self._new_connections.append((sock, listener))
        self._wakeup.wakeup()

    def enqueue_response(self, response: Response) -> None:
        self._responses.append(response)
        if threading.get_ident() != self._thread_ident:
            self._wakeup.wakeup()

    def wakeup(self) -> None:
        self._wakeup.wakeup()

    def stop(self) -> None:
        """Ask the loop to end; it closes every connection on its way out (join the thread to wait for that)."""
        self._running = False
        self._wakeup.wakeup()

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    def connections_per_listener(self) -> dict[str, int]:
        """Open connections by listener name, from any thread (list() copies the map without a thread switch)."""
        counts: dict[str, int] = {}
        for connection in list(self._connections.values()):
            counts[connection.listener] = counts.get(connection.listener, 0) + 1
        return counts

    # -- the loop ------------------------------------------------------------------------------------------------

    def run(self) -> None:
        self._thread_ident = threading.get_ident()
        try:
            while self._running:
                try:
                    self._run_once()
                except Exception:
                    # Errors of one connection are handled where they happen; this keeps the thread alive anyway.
                    log.exception("Network processor %d got an unexpected error; it keeps running", self.id)
        finally:
            self._close_all()

    def _run_once(self) -> None:
        self._now = time.monotonic()
        self._configure_new_connections()
        while self._delayed and self._delayed[0][0] <= self._now:
            self._responses.append(heapq.heappop(self._delayed)[2])
        while self._throttled and self._throttled[0][0] <= self._now:
            self._end_throttle(heapq.heappop(self._throttled)[2])
        self._process_new_responses()
        self._retry_waiting_requests()
        events = self._selector.select(self._poll_timeout())
        self._now = time.monotonic()
        for key, mask in events:
            if key.data is self._wakeup:
                self._wakeup.clear()
            else:
                self._handle_io(key.data, mask)
        self._close_idle_connections()

    def _poll_timeout(self) -> float:
        timeout = self._idle_poll_timeout()
        for timers in (self._delayed, self._throttled):
            if timers:
                timeout = min(timeout, max(0.0, timers[0][0] - self._now))
        return timeout

    def _idle_poll_timeout(self) -> float:
        if self._responses or self._new_connections:
            return 0
        if not self._connections or self._connections_max_idle_ms < 0:
            return MAX_POLL_SECONDS
        oldest = next(iter(self._connections.values()))
        idle_deadline = oldest.last_active + self._connections_max_idle_ms / 1000
        return max(0.0, min(MAX_POLL_SECONDS, idle_deadline - self._now))

    def _configure_new_connections(self) -> None:
        while self._new_connections:
            sock, listener = self._new_connections.popleft()
            try:
                conn = Connection(sock, listener, self._next_connection_index, self._max_request_size, self._now)
            except OSError as e:  # the client left before we got to it
                log.debug("Dropping a connection whose client already left: %s", e)
                sock.close()
                self._quotas.dec(sock)
                continue
            self._next_connection_index += 1
            self._connections[conn.id] = conn
            security = self._listener_security.get(listener)
            if security is not None:
                try:
                    security.attach(conn)
                except Exception as e:
                    self._close_after_error(conn, e)
                    continue
            self._update_interest(conn)

    # -- reading -------------------------------------------------------------------------------------------------

    def _handle_io(self, conn: Connection, mask: int) -> None:
        try:
            if conn.security is not None and conn.security.handshaking:
                self._touch(conn)
                if not conn.security.handshake():
                    return
            if mask & _WRITE:
                self._write(conn)
            if mask & _READ:
                if conn.muted or self._reads_paused:
                    self._update_interest(conn)  # bytes came while reads are off: stop watching them now
                else:
                    self._read(conn)
        except Exception as e:
            self._close_after_error(conn, e)

    def _read(self, conn: Connection) -> None:
        try:
            recv_into = conn.sock.recv_into if conn.security is None else conn.security.recv_into
            count = conn.reader.receive_into(recv_into, self._scratch)
        except BlockingIOError:
            return
        if count == 0:
            self._close(conn, logging.DEBUG, "the client closed it")
            return
        self._touch(conn)
        frame = conn.reader.next_frame()
        if frame is not None:
            self._complete_receive(conn, frame)

    def _complete_receive(self, conn: Connection, frame: memoryview) -> None:
        conn.muted = True  # the selector keeps watching for reads until bytes arrive (see _update_interest)
        request = Request(self.id, conn.id, conn.client_address, frame, time.monotonic_ns(), conn.listener,
                          principal=conn.principal, security_protocol=conn.security_protocol)
        if conn.security is not None:
            answer = conn.security.on_request(frame)  # SASL is answered here, on the network thread, as in Kafka
            request.principal = conn.principal
            if answer is not None:
                response = Response(request, answer.parts, answer.close)
                if answer.delay_s:
                    heapq.heappush(self._delayed, (self._now + answer.delay_s, next(self._delayed_sequence), response))
                else:
                    self._start_response(conn, response)
                return
        if not self._channel.send_request(request):
            conn.waiting_request = request
            self._waiting.append(conn)
            self._pause_reads()

    def _retry_waiting_requests(self) -> None:
        waiting = self._waiting
        while waiting:
            conn = waiting[0]
            if conn.waiting_request is not None:
                if not self._channel.send_request(conn.waiting_request):
                    return
                conn.waiting_request = None
            waiting.popleft()
        if self._reads_paused:
            self._resume_reads()

    def _pause_reads(self) -> None:
        if self._reads_paused:
            return
        self._reads_paused = True
        log.debug("Network processor %d: request queue full, pausing reads", self.id)

    def _resume_reads(self) -> None:
        self._reads_paused = False
        for conn in list(self._connections.values()):
            if not conn.muted:
                try:
                    self._resume_reading(conn)
                except Exception as e:
                    self._close_after_error(conn, e)

    def _resume_reading(self, conn: Connection) -> None:
        """Serve a request already buffered (pipelined), or else watch the socket again."""
        if not self._reads_paused:
            frame = conn.reader.next_frame()
            if frame is not None:
                self._complete_receive(conn, frame)
                return
        self._update_interest(conn)

    # -- writing -------------------------------------------------------------------------------------------------

    def _process_new_responses(self) -> None:
        responses = self._responses
        while responses:
            response = responses.popleft()
            conn = self._connections.get(response.request.connection_id)
            if conn is None:
                log.debug("Dropping the response to %s: its connection is closed", response.request.client_address)
                continue
            try:
                self._start_response(conn, response)
            except Exception as e:
                self._close_after_error(conn, e)

    def _start_response(self, conn: Connection, response: Response) -> None:
        if not conn.muted or conn.send is not None:
            raise RuntimeError("got a response while no request of this connection awaits one")
        if response.parts is None:
            if response.close_connection:
                self._close(conn, logging.DEBUG, "the request handler asked to close it")
            elif response.throttle_ms:
                self._throttle(conn, response.throttle_ms)
            else:
                conn.muted = False
                self._resume_reading(conn)
            return
        conn.send = (ResponseSend if conn.security is None else conn.security.send_class)(response.parts)
        conn.close_after_send = response.close_connection
        conn.throttle_ms = response.throttle_ms
        self._write(conn)

    def _write(self, conn: Connection) -> None:
        if conn.last_active != self._now:  # else its request was read in this same turn of the loop: touched then
            self._touch(conn)
        if not conn.send.write_to(conn.sock):
            self._update_interest(conn)
            return
        conn.send = None
        if conn.close_after_send:
            self._close(conn, logging.DEBUG, "the request handler asked to close it after its response")
            return
        if conn.throttle_ms:
            self._throttle(conn, conn.throttle_ms)
            return
        conn.muted = False
        self._resume_reading(conn)

    def _throttle(self, conn: Connection, throttle_ms: int) -> None:
        """Keep the connection muted for `throttle_ms` (Kafka's ThrottledChannel): its client is over a quota."""
        conn.throttle_ms = 0
        heapq.heappush(self._throttled, (self._now + throttle_ms / 1000, next(self._delayed_sequence), conn))

    def _end_throttle(self, conn: Connection) -> None:
        if self._connections.get(conn.id) is not conn:
            return  # closed meanwhile
        conn.muted = False
        try:
            self._resume_reading(conn)
        except Exception as e:
            self._close_after_error(conn, e)

    # -- bookkeeping ---------------------------------------------------------------------------------------------

    def _update_interest(self, conn: Connection) -> None:
        """Make the selector watch exactly what this connection waits for.

        Muting and pausing do not call this at once: a connection stays registered for reads until bytes arrive
        while reads are off, so a client that waits for each response (most do) costs no epoll_ctl per request.
        """
        wanted = 0
        if not conn.muted and not self._reads_paused:
            wanted |= _READ
        if conn.send is not None:
            wanted |= _WRITE
        registered = conn.registered_events
        if wanted == registered:
            return
        if not registered:
            self._selector.register(conn.sock, wanted, conn)
        elif not wanted:
            self._selector.unregister(conn.sock)
        else:
            self._selector.modify(conn.sock, wanted, conn)
        conn.registered_events = wanted

    def _touch(self, conn: Connection) -> None:
        conn.last_active = self._now
        self._connections.move_to_end(conn.id)

    def _close_idle_connections(self) -> None:
        if self._connections_max_idle_ms < 0:
            return
        deadline = self._now - self._connections_max_idle_ms / 1000
        while self._connections:
            oldest = next(iter(self._connections.values()))
            if oldest.last_active > deadline:
                return
            self._close(oldest, logging.DEBUG, f"idle for more than {self._connections_max_idle_ms} ms")

    def _close_after_error(self, conn: Connection, error: Exception) -> None:
        if isinstance(error, SecurityClose):
            self._close(conn, logging.INFO, str(error))
        elif isinstance(error, ConnectionError):
            self._close(conn, logging.DEBUG, f"the client went away ({error})")
        elif isinstance(error, (FrameError, FilePartError, OSError)):
            self._close(conn, logging.WARNING, f"unexpected error: {error}")
        else:
            self._close(conn, logging.ERROR, f"unexpected error: {error!r}", error)

    def _close(self, conn: Connection, level: int, reason: str, error: Exception | None = None) -> None:
        if self._connections.pop(conn.id, None) is None:
            return
        log.log(level, "Closing connection from %s (connection id %s): %s", conn.client_address, conn.id, reason,
                exc_info=error)
        if conn.registered_events:
            self._selector.unregister(conn.sock)
            conn.registered_events = 0
        conn.waiting_request = None
        conn.send = None
        conn.sock.close()
        self._quotas.dec(conn.sock)
        self._channel.connection_closed(conn.id)

    def _close_all(self) -> None:
        for conn in list(self._connections.values()):
            self._close(conn, logging.DEBUG, "the broker is shutting down")
        while self._new_connections:
            sock = self._new_connections.popleft()[0]
            sock.close()
            self._quotas.dec(sock)
        self._selector.close()
        self._wakeup.close()
