"""The broker as the HTTP port sees it: the handlers' services plus the network parts it reports on."""

from __future__ import annotations

from typing import Protocol

from wirebroker.apis.context import BrokerServices
from wirebroker.network.request_channel import RequestChannel
from wirebroker.network.socket_server import SocketServer
from wirebroker.server.dispatch import Dispatcher


class ObservedBroker(BrokerServices, Protocol):
    """server/broker.py's Broker (not imported here: it imports this package)."""

    channel: RequestChannel
    socket_server: SocketServer | None
    dispatcher: Dispatcher
