"""The network layer, after Kafka's SocketServer: acceptors, selector-driven processors, the request channel and
the request handler pool. See socket_server.py for how the pieces are put together."""

from wirebroker.network.handler_pool import HandlerPool
from wirebroker.network.request_channel import Request, RequestChannel, Response
from wirebroker.network.socket_server import SocketServer

__all__ = ["HandlerPool", "Request", "RequestChannel", "Response", "SocketServer"]
