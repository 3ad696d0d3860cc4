"""`python -m bench.reuseport_broker PORT [wirebroker arguments]`: wirebroker with SO_REUSEPORT on PORT's listener.

An experiment's launcher (bench/processes_experiment.py), not a broker feature: it sets SO_REUSEPORT on every TCP
socket this process binds to PORT, then runs `python -m wirebroker` with the remaining arguments. Several such
processes bound to one port share its connections: Linux hashes each new connection's addresses to one of the
listening sockets, so a client cannot choose which process it talks to.
"""

from __future__ import annotations

import socket
import sys

from wirebroker.cli import main as wirebroker_main


def share_port(port: int) -> None:
    """From now on, a TCP socket of this process bound to `port` gets SO_REUSEPORT first."""
    bind = socket.socket.bind

    def bind_shared(sock: socket.socket, address) -> None:
        if sock.type == socket.SOCK_STREAM and isinstance(address, tuple) and address[1] == port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        bind(sock, address)

    socket.socket.bind = bind_shared


def main(argv: list[str]) -> int:
    port, *wirebroker_args = argv
    share_port(int(port))
    return wirebroker_main(wirebroker_args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
