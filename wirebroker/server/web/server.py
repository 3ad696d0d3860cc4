"""The broker's HTTP port (`http.listener`): a small router on the standard library's ThreadingHTTPServer.

    server = HttpServer("127.0.0.1", 0)
    server.route("GET", "/state", lambda request: HttpResponse.json({"topics": []}))
    server.start()          # serves on a thread of its own; server.url is "http://127.0.0.1:<bound port>"
    ...
    server.shutdown()

Routes match the path exactly (the query string is parsed into `HttpRequest.query`). A path with no route is 404, a
known path asked with another method is 405 naming the allowed ones, and a handler that raises is logged and
answered 500 with the error's text, so one bad route never takes the port down. Each request runs on a thread of its
own (daemon threads: a slow scrape never holds up shutdown); handlers read the broker's state as the network threads
change it, so they take the locks the state's owners document, or read values that a torn read cannot hurt.
"""

from __future__ import annotations

import json
import logging
import selectors
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from wirebroker.config import ConfigError
from wirebroker.network.wakeup import Wakeup

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1024 * 1024  # a control request (a fault to inject, a clock to advance) is small; refuse more


@dataclass(slots=True)
class HttpRequest:
    method: str
    path: str  # without the query string
    query: dict[str, list[str]]  # parse_qs of the query string
    headers: dict[str, str]  # names in lower case
    body: bytes = b""

    def json(self) -> Any:
        """The body as JSON (ValueError when it is not: a handler may let it become a 400)."""
        return json.loads(self.body or b"null")

    def param(self, name: str, default: str | None = None) -> str | None:
        """The first value of a query parameter."""
        values = self.query.get(name)
        return values[0] if values else default


@dataclass(slots=True)
class HttpResponse:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, value: Any, status: int = 200) -> HttpResponse:
        return cls(status, json.dumps(value, indent=1).encode(), "application/json")

    @classmethod
    def text(cls, text: str, status: int = 200, content_type: str = "text/plain; charset=utf-8") -> HttpResponse:
        return cls(status, text.encode(), content_type)


class BadRequest(ValueError):
    """A handler's way to answer 400 with a message (a malformed body or parameter)."""


Handler = Callable[[HttpRequest], HttpResponse]


def parse_http_listener(text: str) -> tuple[str, int]:
    """`http://host:port` (port 0: any free port) -> (host, port); ConfigError naming http.listener otherwise."""
    parts = urlsplit(text.strip())
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "http" or port is None or parts.path not in ("", "/"):
        raise ConfigError(f"http.listener: '{text}' is not of the form http://host:port")
    return parts.hostname or "", port


class HttpServer:
    def __init__(self, host: str, port: int) -> None:
        self._routes: dict[str, dict[str, Handler]] = {}  # path -> method -> handler
        self._httpd = _Server((host, port), _handler_class(self))
        self._thread: threading.Thread | None = None
        self._running = True
        self._wakeup = Wakeup()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host or '127.0.0.1'}:{port}"

    def route(self, method: str, path: str, handler: Handler) -> None:
        """Serve `method path` with `handler`; registering the same pair twice is a mistake and raises."""
        methods = self._routes.setdefault(path, {})
        if method.upper() in methods:
            raise ValueError(f"{method.upper()} {path} already has a handler")
        methods[method.upper()] = handler

    def start(self) -> None:
        self._thread = threading.Thread(target=self._serve, name="wirebroker-http", daemon=True)
        self._thread.start()

    def shutdown(self) -> None:
        """Stop at once (serve_forever would notice only at its next poll, 0.5 s: an embedded broker stops in ms)."""
        self._running = False
        self._wakeup.wakeup()
        if self._thread is not None:
            self._thread.join()
        self._httpd.server_close()
        self._httpd.close_open_connections()
        self._wakeup.close()

    def _serve(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self._httpd, selectors.EVENT_READ, self._httpd)
            self._wakeup.register(selector)
            while self._running:
                for key, _ in selector.select():
                    if key.data is self._httpd:
                        self._httpd.handle_request()  # readable: accepts without waiting, a thread per request

    def handle(self, request: HttpRequest) -> HttpResponse:
        methods = self._routes.get(request.path)
        if methods is None:
            return HttpResponse.text(f"no such path: {request.path}\n", 404)
        handler = methods.get(request.method) or (methods.get("GET") if request.method == "HEAD" else None)
        if handler is None:
            return HttpResponse(405, f"{request.method} is not served on {request.path}\n".encode(),
                                headers={"Allow": ", ".join(sorted(methods))})
        try:
            return handler(request)
        except BadRequest as exc:
            return HttpResponse.text(f"{exc}\n", 400)
        except Exception as exc:
            log.exception("HTTP %s %s failed; answered 500", request.method, request.path)
            return HttpResponse.text(f"{type(exc).__name__}: {exc}\n", 500)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.open_connections: set[socket.socket] = set()  # kept alive by browsers: closed on shutdown
        self.connections_lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client gone mid-request (reset, closed): a debug line, not socketserver's traceback on stderr."""
        log.debug("HTTP connection from %s failed: %r", client_address, sys.exc_info()[1])  # socketserver's except

    def close_open_connections(self) -> None:
        """End the keep-alive connections, so no handler thread serves a stopped broker."""
        with self.connections_lock:
            connections = list(self.open_connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # closed by its client meanwhile


def _handler_class(server: HttpServer) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: a browser or a scraper reuses its connection
        server_version = "wirebroker"

        def setup(self) -> None:
            super().setup()
            with self.server.connections_lock:
                self.server.open_connections.add(self.connection)

        def finish(self) -> None:
            with self.server.connections_lock:
                self.server.open_connections.discard(self.connection)
            super().finish()

        def _serve(self) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                self._write(HttpResponse.text(f"a body of {length} bytes is over {MAX_BODY_BYTES}\n", 413), True)
                return
            request = HttpRequest(self.command, url.path, parse_qs(url.query),
                                  {name.lower(): value for name, value in self.headers.items()},
                                  self.rfile.read(length) if length else b"")
            self._write(server.handle(request), self.command == "HEAD")

        def _write(self, response: HttpResponse, head_only: bool = False) -> None:
            self.send_response(response.status)
            self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(len(response.body)))
            self.send_header("Cache-Control", "no-store")
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.end_headers()
            if not head_only:
                self.wfile.write(response.body)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _serve

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("HTTP %s: " + format, self.client_address[0], *args)

    return _Handler
