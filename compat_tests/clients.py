"""The rows of the matrix: each client, the scenarios its driver can express, and how to install and run it.

A driver is run as `<command> SCENARIOS BOOTSTRAP TOPIC_PREFIX` (SCENARIOS comma-separated) and prints one JSON line
per scenario (drivers/python/driver_common.py describes the line). One process runs all of a client's scenarios
against one broker, so a JVM or a Spark session starts once per broker.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from compat_tests import installers, reference_kafka
from compat_tests.cache import REPO_DIR
from compat_tests.scenarios import COMPRESSION_CODECS

CORE = ("metadata", "roundtrip", *(f"compression_{c}" for c in COMPRESSION_CODECS), "large_records", "seek",
        "idempotent", "consumer_group", "admin")
# Rows whose drivers also express the three-broker failover scenario.
CORE_AND_FAILOVER = (*CORE, "failover")
# Rows whose drivers also express transactions (a client with a transactional producer).
TRANSACTIONAL = (*CORE_AND_FAILOVER, "transactions")
# Rows whose drivers also express the compacted topic (a table read back after the log cleaner ran).
TRANSACTIONAL_AND_COMPACTED = (*TRANSACTIONAL, "compacted")
# The secured listeners' columns (security_listeners.py): SCRAM-SHA-512 over SASL_PLAINTEXT, and TLS.
SECURED = ("sasl_scram", "tls")
PYTHON_DRIVERS = installers.DRIVERS_DIR / "python"


@dataclass(frozen=True)
class Invocation:
    """How to start one client's driver: the command prefix and extra environment."""
    command: list[str]
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Client:
    name: str
    language: str
    scenarios: tuple[str, ...]
    install: Callable[[Path], Invocation]
    # Seconds one driver run takes against Apache Kafka on 2 cores: longest runs are started first.
    expected_seconds: float = 30.0
    heavy: bool = False  # left out by --fast

    def timeout(self, scenario_count: int) -> float:
        """A whole-process limit: generous, because a hung client must not stall the matrix forever."""
        return 120.0 + 3 * self.expected_seconds + 60.0 * scenario_count


def python_driver(script: str, **env: str) -> Callable[[Path], Invocation]:
    def install(cache_dir: Path) -> Invocation:
        return Invocation([str(installers.python_env(cache_dir)), str(PYTHON_DRIVERS / script)], env)
    return install


def java_clients(version: str) -> Callable[[Path], Invocation]:
    return lambda cache_dir: Invocation(installers.java_driver(version, cache_dir))


def kafka_tools(script: str) -> Callable[[Path], Invocation]:
    """Drivers of Kafka's own tools: Python scripts that launch the tool classes from the reference jars."""
    def install(cache_dir: Path) -> Invocation:
        python = installers.python_env(cache_dir)
        jars = reference_kafka.install_jars(cache_dir)
        host = installers.tool_host(cache_dir)
        return Invocation([str(python), str(PYTHON_DRIVERS / script)],
                          {"KAFKA_JARS": str(jars), "KAFKA_TOOL_HOST": json.dumps(host), "PYTHONPATH": str(REPO_DIR)})
    return install


def go_driver(name: str) -> Callable[[Path], Invocation]:
    return lambda cache_dir: Invocation([str(installers.go_drivers(cache_dir)[name])])


def kafkajs(cache_dir: Path) -> Invocation:
    modules = installers.node_modules(cache_dir)
    return Invocation(["node", str(installers.DRIVERS_DIR / "node" / "driver.js")],
                      {"NODE_PATH": str(modules), "KAFKAJS_NO_PARTITIONER_WARNING": "1"})


def kcat(cache_dir: Path) -> Invocation:
    binary = installers.kcat()
    return Invocation([str(installers.python_env(cache_dir)), str(PYTHON_DRIVERS / "kcat_driver.py")],
                      {"KCAT": str(binary)})


def spark(cache_dir: Path) -> Invocation:
    python, jars = installers.spark_env(cache_dir)
    return Invocation([str(python), str(PYTHON_DRIVERS / "spark_driver.py")], {"SPARK_KAFKA_JARS": str(jars)})


CLIENTS: dict[str, Client] = {c.name: c for c in [
    Client("kafka-python", "Python", (*TRANSACTIONAL_AND_COMPACTED, *SECURED), python_driver("kafka_python_driver.py"),
           15),
    Client("confluent-kafka", "Python", (*TRANSACTIONAL_AND_COMPACTED, *SECURED), python_driver("confluent_driver.py"),
           15),
    Client("aiokafka", "Python", (*CORE, "compacted", *SECURED), python_driver("aiokafka_driver.py"), 10),
    Client("java-clients-3.9", "Java", (*TRANSACTIONAL_AND_COMPACTED, *SECURED), java_clients("3.9"), 20),
    Client("java-clients-4", "Java", (*TRANSACTIONAL_AND_COMPACTED, *SECURED, "share_group"), java_clients("4"), 20),
    Client("kafka-cli", "Java", ("metadata", "roundtrip", *(f"compression_{c}" for c in COMPRESSION_CODECS),
                                 "large_records", "seek", "consumer_group", "admin", *SECURED),
           kafka_tools("kafka_cli_driver.py"), 90),
    Client("kafka-verifiable", "Java", ("metadata", *(f"compression_{c}" for c in COMPRESSION_CODECS),
                                        "idempotent", "consumer_group", *SECURED),
           kafka_tools("kafka_verifiable_driver.py"), 45),
    Client("franz-go", "Go", (*TRANSACTIONAL_AND_COMPACTED, *SECURED, "share_group"), go_driver("franz"), 10),
    Client("sarama", "Go", (*CORE, "transactions", "compacted", *SECURED), go_driver("sarama"), 10),
    Client("kafkajs", "Node", (*CORE, "compacted", *SECURED), kafkajs, 15),
    Client("kcat", "C (librdkafka)", ("metadata", "roundtrip", *(f"compression_{c}" for c in COMPRESSION_CODECS),
                                      "large_records", "seek", "idempotent", "consumer_group", "tls"), kcat, 20),
    Client("spark", "Python (pyspark)", ("spark_stream", "spark_batch", *SECURED), spark, 90, heavy=True),
]}
