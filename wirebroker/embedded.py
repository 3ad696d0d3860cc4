"""A broker for tests and notebooks: `with wirebroker.Broker(num_partitions=3) as broker:` (or `async with`).

The block starts with the broker ready on a free 127.0.0.1 port and a temporary data directory, and
`broker.bootstrap_servers` to give any Kafka client; leaving the block (also by an exception) shuts it down and
deletes the directory. It runs in this process on the broker's own threads (the default: a few milliseconds to
start and to stop once the first start has imported the broker), or with `process=True` as a child
`python -m wirebroker` (about 0.2 s; a crash or a held GIL in the test cannot touch it).

Keywords are `server.properties` keys with dots written as underscores (`auto_create_topics_enable=False` is
`auto.create.topics.enable=false`); a keyword that names no key is a ConfigError naming it, before anything starts.
`emulate="3.6"` answers as Apache Kafka 3.6 does (its ApiVersions; `wirebroker --emulate`, apis/emulation.py).
`broker.faults.inject(api="Produce", topic="t", error="NOT_LEADER_OR_FOLLOWER", count=3)` makes the broker
answer chosen requests with an error, late (`delay_ms=`), never (`drop=True`) or by closing the connection
(`close=True`), `broker.faults.clear()` stops it (server/faults.py); with `virtual_clock=True`,
`broker.clock.advance(45_000)` expires group sessions, fetch waits, transactions and retention at once
(log/clock.py). In process mode both go over the child's HTTP port.

The HTTP port is on, on a free port: `broker.http_url` serves /metrics, /state, /compat and a status page
(server/web/); `http_listener="http://127.0.0.1:8081"` chooses the port, `http_listener=""` turns it off.

`create_topic`, `produce`, `read` and `wait_for_group_stable` speak the wire protocol through the inter-broker
client, so a test needs no client library to set up or check what its code under test did. Their failures are the
typed Kafka errors of wirebroker/protocol/errors.py (`TopicAlreadyExistsError`, ...).
"""

from __future__ import annotations

import difflib
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from wirebroker.config import (
    ACCEPTED_AND_IGNORED,
    BROKER_KEYS,
    EMULATE_KEY,
    VIRTUAL_CLOCK_KEY,
    BrokerConfig,
    ConfigError,
)
from wirebroker.log.config import BROKER_TO_TOPIC_KEY
from wirebroker.network.broker_client import BrokerClient
from wirebroker.network.ports import free_port
from wirebroker.protocol.error_codes import ErrorCode
from wirebroker.protocol.errors import error_class
from wirebroker.protocol.message import Message
from wirebroker.protocol.messages.create_topics import CreateTopicsRequest
from wirebroker.protocol.messages.fetch import FetchRequest
from wirebroker.protocol.messages.list_groups import ListGroupsRequest
from wirebroker.protocol.messages.metadata import MetadataRequest
from wirebroker.protocol.messages.produce import ProduceRequest
from wirebroker.protocol.records import (
    BATCH_HEADER_SIZE,
    build_batch,
    iter_records,
    read_header,
)

if TYPE_CHECKING:
    from types import TracebackType

    from wirebroker.server.broker import Broker as ServerBroker

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 20.0
READY_LINE = b"; ready in "  # the last words of cli.py's start-up line
# Where a test broker differs from `wirebroker`'s defaults, as Testcontainers' KafkaContainer does: groups form at
# once, and the internal topics have one partition and one replica, so a test's first group or transaction creates
# one partition, not 50 (0.06 s to a Stable group instead of 0.1-0.5 s), with no warning about replicas.
EMBEDDED_DEFAULTS = {
    "group.initial.rebalance.delay.ms": "0",
    "offsets.topic.num.partitions": "1",
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.num.partitions": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
}
READ_MAX_BYTES = 64 * 1024 * 1024  # per Fetch in read(): a test's partition, whole, in a few round trips
REQUEST_TIMEOUT_MS = 30_000
# The request versions the helpers send: topics by name (Produce v13 and Fetch v13 name them by id), flexible, and
# served by every release `emulate=` takes (Kafka 3.6 serves ListGroups to v4, which has the groups' states).
CREATE_TOPICS_VERSION, PRODUCE_VERSION, FETCH_VERSION, METADATA_VERSION, LIST_GROUPS_VERSION = 7, 9, 12, 12, 4

Value = bytes | str | None
ReadRecord = tuple[int, bytes | None, bytes | None]  # offset, key, value


class Broker:
    """One broker for the length of a `with` block (or between `start()` and `stop()`)."""

    def __init__(self, *, process: bool = False, start_timeout_s: float = START_TIMEOUT_S, emulate: str | None = None,
                 virtual_clock: bool = False, **configs: Any) -> None:
        self.process = process
        self.start_timeout_s = start_timeout_s
        self.props = {**EMBEDDED_DEFAULTS, **config_props(configs)}
        if emulate is not None:  # an Apache Kafka release line, "3.6" to "4.3"
            self.props[EMULATE_KEY] = emulate
        if virtual_clock:  # broker.clock.advance(ms) moves the broker's time
            self.props[VIRTUAL_CLOCK_KEY] = "true"
        self.server: ServerBroker | None = None  # in-process mode
        self.child: subprocess.Popen | None = None  # process mode
        self.root: Path | None = None  # the temporary directory: data (unless log.dirs is given) and the child's log
        self._client: BrokerClient | None = None
        self._client_lock = threading.Lock()
        self._bootstrap = ""
        self._http_url: str | None = None

    def __repr__(self) -> str:
        state = self._bootstrap or "not started"
        return f"wirebroker.Broker({state}, {'process' if self.process else 'thread'})"

    # ---- lifecycle -----------------------------------------------------------------------------------------

    def start(self) -> Self:
        if self.root is not None:
            raise RuntimeError("this Broker was started already; make a new one")
        self.root = Path(tempfile.mkdtemp(prefix="wirebroker-"))
        props = {"listeners": f"PLAINTEXT://127.0.0.1:{free_port()}",
                 "http.listener": f"http://127.0.0.1:{free_port()}", **self.props}
        if "log.dirs" not in props and "log.dir" not in props:
            props["log.dirs"] = str(self.root / "data")
        try:
            config = BrokerConfig(props)  # a bad value fails here, in both modes
            listener = config.listeners[0]
            self._bootstrap = f"{listener.host or '127.0.0.1'}:{listener.port}"
            self._http_url = (config["http.listener"] or "").rstrip("/") or None
            if self.process:
                self._start_child(props)
            else:
                self._start_server(config)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_server(self, config: BrokerConfig) -> None:
        # The broker's own modules load only here: process mode and the helpers never need them.
        from wirebroker.server.broker import Broker as ServerBroker

        self.server = ServerBroker(config)
        self.server.start()
        listener = self.server.bound_listeners()[0]
        self._bootstrap = f"{listener.host or '127.0.0.1'}:{listener.port}"
        if self.server.http_server is not None:  # the port it bound (http_listener may name port 0)
            self._http_url = self.server.http_server.url

    def _start_child(self, props: dict[str, str]) -> None:
        args = [sys.executable, "-m", "wirebroker"]
        for key, value in props.items():
            args += ["--override", f"{key}={value}"]
        with open(self.log_path, "wb") as log:
            self.child = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        # Ready at its start-up line, not when the port accepts: a connection to the port proves nothing while
        # another test's server may hold it for a moment.
        deadline = time.monotonic() + self.start_timeout_s
        while READY_LINE not in self.log_path.read_bytes():
            if self.child.poll() is not None:
                raise RuntimeError(f"wirebroker exited with status {self.child.returncode}:\n{self.log_text()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"wirebroker was not ready within {self.start_timeout_s} s:\n{self.log_text()}")
            time.sleep(0.01)

    def stop(self) -> None:
        """Shut the broker down (SIGTERM for a child, then kill after STOP_TIMEOUT_S) and delete the directory."""
        if self._client is not None:
            self._client.close()
            self._client = None
        try:
            if self.server is not None:
                self.server.shutdown()
            if self.child is not None and self.child.poll() is None:
                self.child.send_signal(signal.SIGTERM)
                try:
                    self.child.wait(STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    self.child.kill()
                    self.child.wait()
        finally:
            if self.root is not None:
                shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        import asyncio

        return await asyncio.to_thread(self.start)

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        traceback: TracebackType | None) -> None:
        import asyncio

        await asyncio.to_thread(self.stop)

    @property
    def bootstrap_servers(self) -> str:
        """`host:port` for a client's bootstrap.servers (confluent-kafka) or bootstrap_servers (kafka-python)."""
        if not self._bootstrap:
            raise RuntimeError("the broker is not started: use `with Broker() as broker:` or broker.start()")
        return self._bootstrap

    @property
    def http_url(self) -> str | None:
        """`http://127.0.0.1:<port>` of the HTTP port (/metrics, /state, /compat, /), None when it is off."""
        if not self._bootstrap:
            raise RuntimeError("the broker is not started: use `with Broker() as broker:` or broker.start()")
        return self._http_url

    @property
    def faults(self) -> Any:
        """Fault injection: `inject(**rule)`, `rules()`, `clear()` (server/faults.py has the rule's fields)."""
        if self.server is not None:
            from wirebroker.server.faults import FaultInjector

            return FaultInjector.of(self.server.dispatcher)
        from wirebroker.http_controls import HttpFaults

        return HttpFaults(self._http_port_url())

    @property
    def clock(self) -> Any:
        """The virtual clock (`virtual_clock=True`): `advance(ms)` runs what fell due before it returns."""
        if self.props.get(VIRTUAL_CLOCK_KEY) != "true":
            raise RuntimeError("the broker runs on the system clock: start it with wirebroker.Broker(virtual_clock="
                               "True)")
        if self.server is not None:
            return self.server.clock
        from wirebroker.http_controls import HttpClock

        return HttpClock(self._http_port_url())

    def _http_port_url(self) -> str:
        """Process mode: the child's HTTP port, where faults and the clock are set."""
        if self.child is None:
            raise RuntimeError("the broker is not started: use `with Broker() as broker:` or broker.start()")
        if self._http_url is None:
            raise RuntimeError("a broker in a child process takes faults and clock moves on its HTTP port, which "
                               "http_listener='' turned off")
        return self._http_url

    @property
    def log_path(self) -> Path:
        """Process mode: the child's standard output and error."""
        return self.root / "broker.log"

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    # ---- helpers for tests ---------------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1, **configs: Any) -> None:
        """CreateTopics; keywords are topic configs with underscores for dots (`cleanup_policy="compact"`)."""
        configs_sent = [CreateTopicsRequest.CreatableTopicConfig(name=key, value=value)
                        for key, value in config_props(configs, check=False).items()]
        topic = CreateTopicsRequest.CreatableTopic(name=name, num_partitions=partitions,
                                                   replication_factor=replication_factor, configs=configs_sent)
        request = CreateTopicsRequest(topics=[topic], timeout_ms=REQUEST_TIMEOUT_MS)
        result = self._send(request, CREATE_TOPICS_VERSION).topics[0]
        _raise_for(result.error_code, f"create_topic({name!r})", result.error_message)

    def produce(self, topic: str, records: Iterable[Value | tuple[Value, Value]], partition: int = 0) -> list[int]:
        """Append values, or (key, value) pairs, as one batch with acks=all; the offsets they got.

        A topic that does not exist is created first when auto.create.topics.enable allows (a Metadata request,
        as a client's producer does)."""
        if isinstance(records, (bytes, str)):
            raise TypeError(f"produce({topic!r}, ...) takes a list of values or (key, value) pairs, not one value")
        now_ms = int(time.time() * 1000)
        pairs = [item if isinstance(item, tuple) else (None, item) for item in records]
        if not pairs:
            return []
        batch = build_batch([(now_ms, _as_bytes(key), _as_bytes(value), ()) for key, value in pairs])
        partition_data = [ProduceRequest.PartitionProduceData(index=partition, records=batch)]
        request = ProduceRequest(acks=-1, timeout_ms=REQUEST_TIMEOUT_MS, topic_data=[
            ProduceRequest.TopicProduceData(name=topic, partition_data=partition_data)])
        result = self._send(request, PRODUCE_VERSION).responses[0].partition_responses[0]
        if result.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and self._auto_create(topic):
            result = self._send(request, PRODUCE_VERSION).responses[0].partition_responses[0]
        _raise_for(result.error_code, f"produce to {topic}-{partition}", result.error_message)
        return list(range(result.base_offset, result.base_offset + len(pairs)))

    def read(self, topic: str, partition: int = 0, from_offset: int = 0) -> list[ReadRecord]:
        """(offset, key, value) of every record from `from_offset` up to the high watermark, control records
        (transaction markers) left out."""
        records: list[ReadRecord] = []
        offset = from_offset
        while True:
            fetch_partition = FetchRequest.FetchPartition(partition=partition, fetch_offset=offset,
                                                          partition_max_bytes=READ_MAX_BYTES)
            request = FetchRequest(max_wait_ms=0, min_bytes=0, max_bytes=READ_MAX_BYTES, topics=[
                FetchRequest.FetchTopic(topic=topic, partitions=[fetch_partition])])
            result = self._send(request, FETCH_VERSION).responses[0].partitions[0]
            _raise_for(result.error_code, f"read from {topic}-{partition} at offset {offset}", None)
            next_offset = _collect_records(result.records, offset, records)
            if next_offset >= result.high_watermark or next_offset == offset:
                return records
            offset = next_offset

    def wait_for_group_stable(self, group_id: str, timeout: float = 30.0) -> None:
        """Return once the group (classic or consumer protocol) is Stable; TimeoutError naming its last state."""
        deadline = time.monotonic() + timeout
        while True:
            response = self._send(ListGroupsRequest(), LIST_GROUPS_VERSION)
            _raise_for(response.error_code, "wait_for_group_stable: ListGroups", None)
            state = next((g.group_state for g in response.groups if g.group_id == group_id), None)
            if state == "Stable":
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"group {group_id!r} was not Stable within {timeout} s "
                                   f"(last state: {state or 'no such group'})")
            time.sleep(0.02)

    def _auto_create(self, topic: str) -> bool:
        """Whether a Metadata request that may create `topic` found it."""
        request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)],
                                  allow_auto_topic_creation=True)
        return self._send(request, METADATA_VERSION).topics[0].error_code != ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

    def _send(self, request: Message, version: int) -> Message:
        with self._client_lock:  # one connection, one request in flight: the client is single-threaded
            if self._client is None:
                host, port = self.bootstrap_servers.rsplit(":", 1)
                self._client = BrokerClient(host, int(port), client_id="wirebroker-embedded",
                                            timeout_s=REQUEST_TIMEOUT_MS / 1000 + 5)
            return self._client.send(request, version)


def config_props(keywords: dict[str, Any], *, check: bool = True) -> dict[str, str]:
    """Keywords as properties: `num_partitions=3` -> {"num.partitions": "3"}, booleans as Kafka writes them.

    With `check`, a keyword that names no broker key is a ConfigError naming it (and the nearest keys)."""
    props = {}
    for keyword, value in keywords.items():
        key = keyword.replace("_", ".")
        if check and key not in KNOWN_KEYS:
            near = difflib.get_close_matches(key, KNOWN_KEYS, n=3)
            raise ConfigError(f"{keyword}: unknown configuration key '{key}'"
                              + (f"; did you mean {', '.join(near)}?" if near else ""))
        props[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return props


KNOWN_KEYS = sorted({*BROKER_KEYS, *BROKER_TO_TOPIC_KEY, *ACCEPTED_AND_IGNORED})


def _collect_records(data: Any, offset: int, into: list[ReadRecord]) -> int:
    """Append the data records at or after `offset` of the whole batches in a fetched `data`; the next offset."""
    buf = memoryview(data or b"")
    pos = 0
    while len(buf) - pos >= BATCH_HEADER_SIZE:
        header = read_header(buf, pos)
        if pos + header.size > len(buf):
            break  # a partial batch at the end of a fetch: the next fetch starts at it
        if not header.is_control:
            into.extend((record.offset, record.key, record.value)
                        for record in iter_records(buf, pos, header, READ_MAX_BYTES) if record.offset >= offset)
        offset = max(offset, header.next_offset)
        pos += header.size
    return offset


def _as_bytes(value: Value) -> bytes | None:
    return value.encode() if isinstance(value, str) else value


def _raise_for(code: int, what: str, message: str | None) -> None:
    """The typed Kafka error for a non-zero error code, its message saying which helper call got it."""
    if code:
        error = error_class(code)
        raise error(f"{what}: {error.code.name}" + (f" ({message})" if message else ""))
