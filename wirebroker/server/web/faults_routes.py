"""Fault injection and the virtual clock over HTTP, for tests in any language (issue 15 item 5).

- `POST /faults` with a JSON object of the rule's fields (server/faults.py: `{"api": "Produce", "topic": "t",
  "error": "NOT_LEADER_OR_FOLLOWER", "count": 3}`; `delay_ms`, `drop`, `close`, `share`, `version`, `partition`,
  `client_id`, `seed`), or a list of them: 201 with the rule (or list) as set, its id included. A bad field: 400
  naming it.
- `GET /faults`: every rule set since the last clear, with `fired` (how often) and `remaining`.
- `DELETE /faults`: remove them all; `{"cleared": n}`.
- `POST /clock/advance` with `{"ms": 45000}`: move the virtual clock (`wirebroker.virtual.clock.enable=true`) and
  expire what fell due before answering; 400 on the system clock. `GET /clock`: its reading.
"""

from __future__ import annotations

from typing import Any

from wirebroker.server.faults import FaultInjector, FaultRuleError
from wirebroker.server.web.server import (
    BadRequest,
    HttpRequest,
    HttpResponse,
    HttpServer,
)


def install(server: HttpServer, broker: Any) -> None:
    faults = FaultInjector.of(broker.dispatcher)
    clock = broker.clock

    def add_faults(request: HttpRequest) -> HttpResponse:
        body = _json(request)
        specs = body if isinstance(body, list) else [body]
        if not all(isinstance(spec, dict) for spec in specs):
            raise BadRequest("POST /faults takes a JSON object of a rule's fields, or a list of them")
        try:
            rules = [faults.inject(**spec) for spec in specs]
        except FaultRuleError as exc:
            raise BadRequest(str(exc)) from None
        return HttpResponse.json(rules if isinstance(body, list) else rules[0], status=201)

    def advance(request: HttpRequest) -> HttpResponse:
        spec = _json(request)
        ms = spec.get("ms") if isinstance(spec, dict) else None
        if not clock.virtual:
            raise BadRequest("the broker runs on the system clock: start it with wirebroker.virtual.clock.enable=true")
        if isinstance(ms, bool) or not isinstance(ms, int) or ms < 0:
            raise BadRequest('POST /clock/advance takes {"ms": <milliseconds, an integer >= 0>}')
        clock.advance(ms)
        return HttpResponse.json(_reading(clock))

    server.route("POST", "/faults", add_faults)
    server.route("GET", "/faults", lambda request: HttpResponse.json(faults.rules()))
    server.route("DELETE", "/faults", lambda request: HttpResponse.json({"cleared": faults.clear()}))
    server.route("POST", "/clock/advance", advance)
    server.route("GET", "/clock", lambda request: HttpResponse.json(_reading(clock)))


def _json(request: HttpRequest) -> Any:
    try:
        return request.json()
    except ValueError:
        raise BadRequest("the body is not JSON") from None


def _reading(clock: Any) -> dict[str, Any]:
    return {"virtual": clock.virtual, "time_ms": clock.time_ms(),
            "advanced_ms": clock.advanced_ms if clock.virtual else 0}
