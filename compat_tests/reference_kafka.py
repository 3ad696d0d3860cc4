"""Apache Kafka 4.3.1 from Maven Central as a reference broker: install its jars, start it, run its tools.

    jars = install_jars()                       # cached in .cache/compat/jars/kafka-4.3.1 (92 jars, ~54 MB)
    with ReferenceKafka(tmp_dir, jars) as kafka: # single-node KRaft, combined broker+controller, 127.0.0.1
        run_tool(jars, TOOLS["topics"], ["--bootstrap-server", kafka.bootstrap, "--list"])

The broker runs as `java -cp '<jars>/*' kafka.Kafka server.properties` (the bin/*.sh scripts are not on Central),
after `kafka.tools.StorageTool format --standalone` of a fresh log dir. Files in work_dir: server.properties,
log4j2.properties, broker.log (the broker's own log), data/ (log.dirs).
"""
from __future__ import annotations

import base64
import subprocess
import uuid
from pathlib import Path
from typing import Mapping, Sequence

from compat_tests.brokers import BrokerProcess, BrokerStartError, free_port
from compat_tests.cache import DEFAULT_CACHE_DIR
from compat_tests.maven import classpath, fetch_jars

KAFKA_VERSION = "4.3.1"
JARS_NAME = f"kafka-{KAFKA_VERSION}"
# As kafka-server-start.sh: a fixed 1 GiB heap with G1.
BROKER_JVM_OPTS = ("-Xmx1G", "-Xms1G", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
                   "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
                   "-Djava.awt.headless=true")
# Tools are short-lived: a small heap and the C1 compiler only start ~30 % faster on 2 cores.
TOOL_JVM_OPTS = ("-Xmx512M", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Djava.awt.headless=true")
TOOL_TIMEOUT_S = 120.0

TOOLS = {
    "topics": "org.apache.kafka.tools.TopicCommand",
    "console-producer": "org.apache.kafka.tools.ConsoleProducer",
    "console-consumer": "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "consumer-groups": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "configs": "kafka.admin.ConfigCommand",
    "broker-api-versions": "org.apache.kafka.tools.BrokerApiVersionsCommand",
    "verifiable-producer": "org.apache.kafka.tools.VerifiableProducer",
    "verifiable-consumer": "org.apache.kafka.tools.VerifiableConsumer",
    "producer-perf": "org.apache.kafka.tools.ProducerPerformance",
    "consumer-perf": "org.apache.kafka.tools.ConsumerPerformance",
    "end-to-end-latency": "org.apache.kafka.tools.EndToEndLatency",
    "dump-log-segments": "org.apache.kafka.tools.DumpLogSegments",
    "storage": "kafka.tools.StorageTool",
}

BROKER_LOG4J2 = """\
status = error
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {log_file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
"""
# Kafka's request logger at DEBUG: a "Completed request:{json}" line per request, in a file of its own.
REQUEST_LOG4J2 = """\
appender.requests.type = File
appender.requests.name = REQUESTS
appender.requests.fileName = {request_log_file}
appender.requests.layout.type = PatternLayout
appender.requests.layout.pattern = %m%n
logger.request.name = kafka.request.logger
logger.request.level = DEBUG
logger.request.additivity = false
logger.request.appenderRef.requests.ref = REQUESTS
"""
# Tools print their results on stdout; keep their logging on stderr and quiet.
TOOLS_LOG4J2 = """\
status = error
appender.err.type = Console
appender.err.name = STDERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = STDERR
"""


def install_jars(cache_dir: Path = DEFAULT_CACHE_DIR) -> Path:
    """Fetch Kafka's broker and tools jars (cached) and return the folder that is their classpath."""
    jars_dir = fetch_jars(JARS_NAME, cache_dir)
    tools_log4j = jars_dir / "tools-log4j2.properties"
    if not tools_log4j.exists():
        tools_log4j.write_text(TOOLS_LOG4J2)
    return jars_dir


def tool_command(jars_dir: Path, tool_class: str, args: Sequence[str],
                 jvm_opts: Sequence[str] = TOOL_JVM_OPTS) -> list[str]:
    """The command line that runs one of Kafka's tool classes (a TOOLS value, or any main class in the jars)."""
    return ["java", *jvm_opts, f"-Dlog4j2.configurationFile={jars_dir / 'tools-log4j2.properties'}",
            "-cp", classpath(jars_dir), tool_class, *map(str, args)]


def run_tool(jars_dir: Path, tool_class: str, args: Sequence[str], *, input: str | None = None,
             timeout: float = TOOL_TIMEOUT_S, jvm_opts: Sequence[str] = TOOL_JVM_OPTS,
             check: bool = False) -> subprocess.CompletedProcess:
    """Run one of Kafka's tool classes to completion and return its CompletedProcess (text stdout/stderr)."""
    return subprocess.run(tool_command(jars_dir, tool_class, args, jvm_opts), input=input, capture_output=True,
                          text=True, timeout=timeout, check=check,
                          stdin=None if input is not None else subprocess.DEVNULL)


def broker_properties(port: int, controller_port: int, log_dirs: Path, node_id: int = 0,
                      settings: Mapping[str, object] | None = None, voters: str | None = None) -> str:
    """server.properties for a KRaft broker+controller on 127.0.0.1, single-replica internal topics by default.

    voters: `controller.quorum.voters` of a static multi-node quorum ("1@127.0.0.1:P,2@..."); without it the node
    is a quorum of one (the bootstrap form that `format --standalone` needs).
    """
    quorum = ({"controller.quorum.voters": voters} if voters
              else {"controller.quorum.bootstrap.servers": f"127.0.0.1:{controller_port}"})
    props: dict[str, object] = {
        "process.roles": "broker,controller",
        "node.id": node_id,
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        **quorum,
        "log.dirs": log_dirs,
        "offsets.topic.replication.factor": 1,
        "transaction.state.log.replication.factor": 1,
        "transaction.state.log.min.isr": 1,
        "share.coordinator.state.topic.replication.factor": 1,
        "share.coordinator.state.topic.min.isr": 1,
        "group.initial.rebalance.delay.ms": 0,
        **(settings or {}),
    }
    return "".join(f"{key}={value}\n" for key, value in props.items())


class ReferenceKafka(BrokerProcess):
    """Apache Kafka 4.3.1, single node, KRaft combined mode, PLAINTEXT on 127.0.0.1:<free port>.

    settings: extra server.properties entries (Kafka's keys), e.g. {"num.partitions": 4}.
    log_requests: Kafka's request logger on, into work_dir/requests.log (it costs the broker CPU: not for benchmarks).
    """

    name = f"Apache Kafka {KAFKA_VERSION}"

    def __init__(self, work_dir: Path, jars_dir: Path | None = None, *, port: int | None = None,
                 node_id: int = 0, settings: Mapping[str, object] | None = None,
                 controller_port: int | None = None, voters: str | None = None, cluster_id: str | None = None,
                 jvm_opts: Sequence[str] = BROKER_JVM_OPTS, log_requests: bool = False) -> None:
        super().__init__(work_dir, port)
        self.log_requests = log_requests
        self.jars_dir = jars_dir or install_jars()
        self.controller_port = controller_port or free_port()
        self.node_id = node_id
        self.settings = dict(settings or {})
        # A member of a multi-node quorum: every member is formatted with the same cluster id and voters.
        self.voters = voters
        self.cluster_id = cluster_id or random_cluster_id()
        self.jvm_opts = tuple(jvm_opts)

    @property
    def request_log_path(self) -> Path:
        return self.work_dir / "requests.log"

    @property
    def properties_path(self) -> Path:
        return self.work_dir / "server.properties"

    def prepare(self) -> None:
        data_dir = self.work_dir / "data"
        self.properties_path.write_text(broker_properties(self.port, self.controller_port, data_dir,
                                                          self.node_id, self.settings, self.voters))
        log4j = BROKER_LOG4J2.format(log_file=self.log_path)
        if self.log_requests:
            log4j += REQUEST_LOG4J2.format(request_log_file=self.request_log_path)
        (self.work_dir / "log4j2.properties").write_text(log4j)
        if not (data_dir / "meta.properties").exists():
            self._format_storage()

    def _format_storage(self) -> None:
        # With static voters every member formats alike; a quorum of one is bootstrapped as `--standalone`.
        standalone = [] if self.voters else ["--standalone"]
        proc = run_tool(self.jars_dir, TOOLS["storage"],
                        ["format", "-t", self.cluster_id, "-c", self.properties_path, *standalone])
        if proc.returncode != 0:
            raise BrokerStartError(f"StorageTool format failed:\n{proc.stdout}{proc.stderr}")

    def command(self) -> list[str]:
        return ["java", *self.jvm_opts, f"-Dlog4j2.configurationFile={self.work_dir / 'log4j2.properties'}",
                f"-Dkafka.logs.dir={self.work_dir}", "-cp", classpath(self.jars_dir), "kafka.Kafka",
                str(self.properties_path)]


def random_cluster_id() -> str:
    """What `StorageTool random-uuid` prints (a URL-safe base64 UUID), without a JVM start.

    Like Kafka's Uuid.randomUuid(), never one that starts with "-": `format -t -xyz` reads it as an option.
    """
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id
