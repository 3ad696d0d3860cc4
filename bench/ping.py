"""Closed-loop request round trips on raw sockets: what one request costs a broker, with no client library around it.

Each connection sends one prebuilt request, waits for the whole response, and sends it again; C connections run
side by side from one thread (a selector), so the figures are round-trip times (one connection: the broker's own
per-request path plus two socket hops) and requests per second (several connections: how the broker's threads
share the work). The requests are encoded once with wirebroker's message classes and sent as the same bytes to
every broker, at versions Apache Kafka 4.3.1 also serves:
  api_versions  ApiVersions v3: network and dispatch only
  produce       Produce v9, acks=1, one 1 KB record to partition 0 (the write path)
  fetch         Fetch v11 without a session, max_wait_ms=0, from offset 0 of partition 0 (the read path; the
                topic gets its one record first)
Latencies are measured after a warm-up of WARMUP_REQUESTS per connection; "requests_sent" counts those too.
"""

from __future__ import annotations

import selectors
import socket
import statistics
import struct
import time

from wirebroker.protocol.headers import request_header_version
from wirebroker.protocol.messages.api_versions import ApiVersionsRequest
from wirebroker.protocol.messages.fetch import FetchRequest
from wirebroker.protocol.messages.produce import ProduceRequest
from wirebroker.protocol.messages.request_header import RequestHeader
from wirebroker.protocol.records import build_batch

PING_APIS = ("api_versions", "produce", "fetch")
VERSIONS = {"api_versions": 3, "produce": 9, "fetch": 11}
WARMUP_REQUESTS = 200
PRODUCE_TIMEOUT_MS = 30_000
FETCH_PARTITION_MAX_BYTES = 64 * 1024
RECV_CHUNK = 256 * 1024
_SIZE = struct.Struct(">i")


def request_frame(api: str, topic: str, record_size: int) -> bytes:
    """The size-prefixed request that every round trip of `api` sends."""
    version = VERSIONS[api]
    if api == "api_versions":
        body = ApiVersionsRequest(client_software_name="wirebroker-bench", client_software_version="1")
    elif api == "produce":
        batch = build_batch([(int(time.time() * 1000), None, b"x" * record_size, ())])
        body = ProduceRequest(acks=1, timeout_ms=PRODUCE_TIMEOUT_MS, topic_data=[ProduceRequest.TopicProduceData(
            name=topic, partition_data=[ProduceRequest.PartitionProduceData(index=0, records=batch)])])
    elif api == "fetch":
        body = FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=FETCH_PARTITION_MAX_BYTES,
                            session_id=0, session_epoch=-1, rack_id="", topics=[FetchRequest.FetchTopic(
                                topic=topic, partitions=[FetchRequest.FetchPartition(
                                    partition=0, current_leader_epoch=-1, fetch_offset=0, log_start_offset=-1,
                                    partition_max_bytes=FETCH_PARTITION_MAX_BYTES)])])
    else:
        raise ValueError(f"unknown ping api {api!r}; choose one of {PING_APIS}")
    header = RequestHeader(request_api_key=body.API_KEY, request_api_version=version, correlation_id=1,
                           client_id="wirebroker-bench")
    payload = header.encode(request_header_version(body.API_KEY, version)) + body.encode(version)
    return _SIZE.pack(len(payload)) + payload


class _Connection:
    """One socket with at most one request in flight."""

    def __init__(self, bootstrap: str, frame: bytes) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.frame = frame
        self.buffer = bytearray()
        self.sent_ns = 0
        self.done = 0

    def send(self) -> None:
        self.buffer.clear()
        self.sent_ns = time.perf_counter_ns()
        self.sock.sendall(self.frame)

    def receive(self) -> bool:
        """Read what is there; True once the whole response is in."""
        chunk = self.sock.recv(RECV_CHUNK)
        if not chunk:
            raise ConnectionError("the broker closed the connection")
        self.buffer += chunk
        return len(self.buffer) >= 4 and len(self.buffer) >= 4 + _SIZE.unpack_from(self.buffer)[0]

    def round_trip(self) -> None:
        self.send()
        while not self.receive():
            pass


def ping(bootstrap: str, api: str, topic: str, requests: int, connections: int = 1,
         record_size: int = 1000) -> dict[str, float]:
    """`requests` timed round trips on each of `connections` connections: rate and latency percentiles."""
    frame = request_frame(api, topic, record_size)
    conns = [_Connection(bootstrap, frame) for _ in range(connections)]
    try:
        if api == "fetch":
            seed = _Connection(bootstrap, request_frame("produce", topic, record_size))
            seed.round_trip()
            seed.sock.close()
        for conn in conns:
            for _ in range(WARMUP_REQUESTS):
                conn.round_trip()
        latencies_ns, total_s = _run(conns, requests)
    finally:
        for conn in conns:
            conn.sock.close()
    latencies_ns.sort()
    warmup = WARMUP_REQUESTS * connections + (1 if api == "fetch" else 0)
    return {"requests": float(len(latencies_ns)), "requests_sent": float(len(latencies_ns) + warmup),
            "connections": float(connections), "seconds": total_s,
            "requests_per_s": len(latencies_ns) / total_s, "mean_us": statistics.fmean(latencies_ns) / 1e3,
            "p50_us": _quantile(latencies_ns, 0.5) / 1e3, "p99_us": _quantile(latencies_ns, 0.99) / 1e3,
            "p999_us": _quantile(latencies_ns, 0.999) / 1e3}


def _run(conns: list[_Connection], requests: int) -> tuple[list[int], float]:
    """Round trips until each connection has done `requests`: every latency (ns) and the seconds it all took."""
    latencies: list[int] = []
    with selectors.DefaultSelector() as selector:
        started = time.perf_counter()
        for conn in conns:
            selector.register(conn.sock, selectors.EVENT_READ, conn)
            conn.send()
        pending = len(conns)
        while pending:
            for key, _mask in selector.select():
                conn = key.data
                if not conn.receive():
                    continue
                latencies.append(time.perf_counter_ns() - conn.sent_ns)
                conn.done += 1
                if conn.done < requests:
                    conn.send()
                else:
                    pending -= 1
        return latencies, time.perf_counter() - started


def _quantile(sorted_values: list[int], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * q))]
