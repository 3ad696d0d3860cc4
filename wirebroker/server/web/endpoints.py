"""The port's own routes: `/state` (server/web/state.py) and, as they come, `/metrics`, `/compat` and `/`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wirebroker.server.web.server import HttpRequest, HttpResponse, HttpServer
from wirebroker.server.web.state import broker_state

if TYPE_CHECKING:
    from wirebroker.apis.context import BrokerServices


def install(server: HttpServer, broker: BrokerServices) -> None:
    def state(request: HttpRequest) -> HttpResponse:
        return HttpResponse.json(broker_state(broker))

    server.route("GET", "/state", state)
