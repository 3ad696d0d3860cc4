"""The HTTP port's router over a real socket: routes by method and exact path, 404, 405, 400, 500, HEAD, bodies."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from wirebroker.config import ConfigError
from wirebroker.server.web.server import (
    BadRequest,
    HttpRequest,
    HttpResponse,
    HttpServer,
    parse_http_listener,
)


@pytest.fixture
def server():
    server = HttpServer("127.0.0.1", 0)
    yield server
    server.shutdown()


def _call(url: str, method: str = "GET", body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, data=body, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_a_route_gets_its_method_path_query_and_body(server):
    seen: list[HttpRequest] = []

    def echo(request: HttpRequest) -> HttpResponse:
        seen.append(request)
        return HttpResponse.json({"got": request.json(), "n": request.param("n")}, status=201)

    server.route("POST", "/faults", echo)
    server.start()
    status, headers, body = _call(server.url + "/faults?n=3", "POST", json.dumps({"error": 6}).encode())
    assert (status, headers["Content-Type"], json.loads(body)) == (201, "application/json", {"got": {"error": 6},
                                                                                             "n": "3"})
    assert (seen[0].method, seen[0].path, seen[0].query) == ("POST", "/faults", {"n": ["3"]})


def test_unknown_paths_other_methods_bad_requests_and_failures_get_their_status(server):
    def failing(request: HttpRequest) -> HttpResponse:
        raise RuntimeError("broken on purpose")

    def refusing(request: HttpRequest) -> HttpResponse:
        raise BadRequest("count must be a number")

    server.route("GET", "/state", lambda request: HttpResponse.text("ok"))
    server.route("GET", "/boom", failing)
    server.route("POST", "/clock", refusing)
    server.start()
    assert _call(server.url + "/nothing")[0] == 404
    status, headers, _ = _call(server.url + "/state", "DELETE")
    assert (status, headers["Allow"]) == (405, "GET")
    assert _call(server.url + "/clock", "POST", b"{}")[::2] == (400, b"count must be a number\n")
    assert _call(server.url + "/boom")[::2] == (500, b"RuntimeError: broken on purpose\n")
    status, headers, body = _call(server.url + "/state", "HEAD")
    assert (status, headers["Content-Length"], body) == (200, "2", b"")
    assert _call(server.url + "/state")[::2] == (200, b"ok")  # the port serves on after a failing route


def test_a_path_and_method_take_one_handler(server):
    server.route("GET", "/state", lambda request: HttpResponse.text("one"))
    with pytest.raises(ValueError, match="GET /state already has a handler"):
        server.route("get", "/state", lambda request: HttpResponse.text("two"))


@pytest.mark.parametrize("text", ["127.0.0.1:8081", "https://127.0.0.1:8081", "http://127.0.0.1", "http://h:x",
                                  "http://h:8081/metrics"])
def test_http_listener_must_be_an_http_url_with_a_port(text):
    with pytest.raises(ConfigError, match="http.listener"):
        parse_http_listener(text)


def test_http_listener_port_zero_means_any_free_port():
    assert parse_http_listener("http://127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_http_listener("http://:8081") == ("", 8081)


def test_shutdown_ends_kept_alive_connections_at_once():
    import http.client
    import time

    server = HttpServer("127.0.0.1", 0)
    server.route("GET", "/state", lambda request: HttpResponse.text("ok"))
    server.start()
    host, port = server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.request("GET", "/state")
    assert connection.getresponse().read() == b"ok"  # HTTP/1.1: the connection stays open for the next request
    started = time.monotonic()
    server.shutdown()
    assert time.monotonic() - started < 0.1
    with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
        connection.request("GET", "/state")
        connection.getresponse()
