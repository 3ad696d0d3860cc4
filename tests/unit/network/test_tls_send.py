"""TLS responses (network/tls.py): a file range goes out through TLS in bounded chunks, resumed across partial
writes of a non-blocking socket, byte for byte."""

from __future__ import annotations

import os
import select
import socket
import ssl
import threading

import pytest

from tests.integration.tls_certificates import make_pki
from wirebroker.network.tls import TLS_FILE_CHUNK, TlsResponseSend, handshake_step
from wirebroker.protocol.records import FileRegion


@pytest.fixture
def tls_pair(tmp_path):
    pki = make_pki(tmp_path / "pki")
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(pki.broker.cert_pem, pki.broker.key_pem)
    client_context = ssl.create_default_context(cafile=str(pki.ca_pem))
    left, right = socket.socketpair()
    left.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8192)  # many partial writes
    left.setblocking(False)
    server = server_context.wrap_socket(left, server_side=True, do_handshake_on_connect=False)
    client = client_context.wrap_socket(right, server_hostname="localhost", do_handshake_on_connect=False)
    handshaker = threading.Thread(target=client.do_handshake)
    handshaker.start()
    while not handshake_step(server):
        select.select([server], [], [], 5)
    handshaker.join()
    yield server, client
    server.close()
    client.close()


def test_a_file_range_and_buffers_arrive_intact_through_tls(tls_pair, tmp_path):
    server, client = tls_pair
    data = os.urandom(5 * TLS_FILE_CHUNK + 123)
    path = tmp_path / "segment.log"
    path.write_bytes(b"skip" + data + b"tail")
    with open(path, "rb") as file:
        send = TlsResponseSend([b"head", FileRegion(file.fileno(), 4, len(data), file), memoryview(b"end")])
        expected = b"head" + data + b"end"
        received = bytearray()

        def read() -> None:
            while len(received) < len(expected):
                received.extend(client.recv(65536))

        assert not send.write_to(server)  # nobody reads yet: the small send buffer fills, the rest waits
        reader = threading.Thread(target=read)
        reader.start()
        while not send.write_to(server):  # resumed where it stopped, chunk by chunk
            select.select([], [server], [], 5)
        reader.join(10)
    assert bytes(received) == expected
