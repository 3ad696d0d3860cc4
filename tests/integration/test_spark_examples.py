"""examples/spark run against a test broker on a free port: the streaming pipeline (Kafka source -> transform ->
Kafka sink) and the batch report over the log dir with the wirebroker data source.

The default run calls each example's main() in this process, on the module's one SparkSession; with
WIREBROKER_RELIABILITY=full each also runs as the one command the README gives, in its own Spark.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess

import pytest
from confluent_kafka import Producer

from compat_tests.cache import REPO_DIR
from compat_tests.spark_session import spark_python_and_jars, worker_environment
from tests.integration.broker_process import BrokerProcess
from tests.integration.test_spark_datasource import (
    FRESH_CHECKPOINTS,
    kafka_rows,
    module_session,
    wait_for_checkpoint,
)

EXAMPLES = REPO_DIR / "examples" / "spark"
FULL = os.environ.get("WIREBROKER_RELIABILITY") == "full"
ORDERS = 2000 if FULL else 300
CUSTOMERS = 7


def example(name: str):
    spec = importlib.util.spec_from_file_location(f"spark_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def spark(request):
    yield from module_session(request)


@pytest.fixture(scope="module")
def orders_broker(tmp_path_factory):
    process = BrokerProcess(tmp_path_factory.mktemp("examples") / "data", FRESH_CHECKPOINTS).start()
    producer = Producer({"bootstrap.servers": process.bootstrap, "acks": "all", "linger.ms": 5})
    for i in range(ORDERS):
        producer.produce("orders", key=b"customer-%d" % (i % CUSTOMERS), value=b"order %d" % i, partition=0)
    assert producer.flush(30) == 0
    yield process
    try:
        process.stop()
    finally:
        process.kill()


def check_pipeline_output(spark, broker: BrokerProcess, sink: str) -> None:
    rows = kafka_rows(spark, broker.bootstrap, sink, includeHeaders="true")
    assert [row.value for row in rows] == [b"ORDER %d" % i for i in range(ORDERS)]
    assert [row.key for row in rows] == [b"customer-%d" % (i % CUSTOMERS) for i in range(ORDERS)]
    assert [row.headers[0].value for row in rows] == [b"%d" % i for i in range(ORDERS)]


def check_report(per_partition, top_keys) -> None:
    assert [(row.partition, row.records, row.first_offset, row.last_offset) for row in per_partition] == \
        [(0, ORDERS, 0, ORDERS - 1)]
    assert per_partition[0].value_bytes == sum(len(b"ORDER %d" % i) for i in range(ORDERS))
    assert top_keys[0].key == "customer-0" and top_keys[0]["count"] == len(range(0, ORDERS, CUSTOMERS))


def test_the_streaming_pipeline_and_the_batch_report(spark, orders_broker, tmp_path):
    example("stream_upper").main(["--bootstrap", orders_broker.bootstrap, "--source", "orders", "--sink", "upper",
                                  "--checkpoint", str(tmp_path / "checkpoint"), "--available-now"])
    check_pipeline_output(spark, orders_broker, "upper")
    wait_for_checkpoint(orders_broker.data_dir, "upper", ORDERS)
    check_report(*example("batch_report").main(["--path", str(orders_broker.data_dir), "--topic", "upper"]))


@pytest.mark.skipif(not FULL, reason="a Spark per command: WIREBROKER_RELIABILITY=full")
def test_each_example_runs_as_one_command(spark, orders_broker, tmp_path):
    python, jars = spark_python_and_jars()
    env = {**os.environ, **worker_environment(python), "SPARK_KAFKA_JARS": str(jars),
           "WIREBROKER_BOOTSTRAP": orders_broker.bootstrap, "WIREBROKER_LOG_DIR": str(orders_broker.data_dir)}
    subprocess.run([python, EXAMPLES / "stream_upper.py", "--sink", "upper-command", "--available-now",
                    "--checkpoint", tmp_path / "checkpoint"], env=env, check=True, timeout=600, cwd=tmp_path)
    check_pipeline_output(spark, orders_broker, "upper-command")
    wait_for_checkpoint(orders_broker.data_dir, "upper-command", ORDERS)
    report = subprocess.run([python, EXAMPLES / "batch_report.py", "--topic", "upper-command"], env=env, check=True,
                            timeout=600, cwd=tmp_path, capture_output=True, text=True).stdout
    assert f"upper-command-0: {ORDERS} records" in report and "top keys: customer-0" in report
