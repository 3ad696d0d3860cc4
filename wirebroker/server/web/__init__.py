"""The broker's HTTP port (`http.listener`): metrics, state, compatibility and a status page; more routes plug in.

Nothing here is imported unless `http.listener` is set (server/broker.py imports this package lazily, and
tests/unit/test_startup_imports.py keeps it so). Each module named in ROUTE_MODULES has
`install(server: HttpServer, broker: BrokerServices) -> None`, which registers its routes with `server.route`
(server.py's docstring shows the routing API).
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING

from wirebroker.server.web.server import HttpServer, parse_http_listener

if TYPE_CHECKING:
    from wirebroker.apis.context import BrokerServices

log = logging.getLogger(__name__)

# The modules whose routes the port serves, each imported when the port starts.
ROUTE_MODULES = ("wirebroker.server.web.endpoints", "wirebroker.server.web.faults_routes")


def start_http_server(broker: BrokerServices, listener: str) -> HttpServer:
    """Bind `listener` (http://host:port), register every module's routes, and serve on a thread of its own."""
    host, port = parse_http_listener(listener)
    server = HttpServer(host, port)
    for name in ROUTE_MODULES:
        importlib.import_module(name).install(server, broker)
    server.start()
    log.info("HTTP listener on %s (/metrics, /state, /compat, and a status page at /)", server.url)
    return server
