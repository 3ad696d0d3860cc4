"""The port's own routes: `/metrics`, `/state`, `/compat` and the status page `/` (static/index.html).

prometheus_client loads at the first scrape, not when the port starts: an embedded broker that nobody scrapes
starts without it (about 35 ms of imports).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from wirebroker.server.web.compat import compat_document
from wirebroker.server.web.request_metrics import RequestMetrics
from wirebroker.server.web.server import Handler, HttpRequest, HttpResponse, HttpServer
from wirebroker.server.web.state import broker_state

if TYPE_CHECKING:
    from wirebroker.server.web.broker_view import ObservedBroker

STATUS_PAGE = Path(__file__).with_name("static") / "index.html"


def install(server: HttpServer, broker: ObservedBroker) -> None:
    requests = RequestMetrics()
    broker.dispatcher.request_metrics = requests  # from now on the dispatcher counts every answer
    scrape: list[Handler] = []
    scrape_lock = threading.Lock()

    def metrics(request: HttpRequest) -> HttpResponse:
        with scrape_lock:
            if not scrape:
                from wirebroker.server.web.metrics import metrics_route

                scrape.append(metrics_route(broker, requests))
        return scrape[0](request)

    def state(request: HttpRequest) -> HttpResponse:
        return HttpResponse.json(broker_state(broker))

    def compat(request: HttpRequest) -> HttpResponse:
        return HttpResponse.json(compat_document(broker))

    page = STATUS_PAGE.read_bytes()

    def status_page(request: HttpRequest) -> HttpResponse:
        return HttpResponse(200, page, "text/html; charset=utf-8")

    server.route("GET", "/metrics", metrics)
    server.route("GET", "/state", state)
    server.route("GET", "/compat", compat)
    server.route("GET", "/", status_page)
