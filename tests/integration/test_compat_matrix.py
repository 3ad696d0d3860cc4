"""The compatibility matrix (compat_tests/) as tests.

The first tests check the runner's own machinery with real processes and files (fast, always run). The matrix
tests run every client × scenario on wirebroker and on Apache Kafka 4.3.1 (`run_wirebroker_matrix`, ~10 min on 2
cores, installs cached in .cache/compat) and assert that every cell green on Kafka is green on wirebroker. They are
part of every test run (`make test`, CI). A missing toolchain fails them with what to install.

The three-broker column (failover: a leader killed -9 mid-produce) runs from its own test on a ZooKeeper + 3
wirebrokers cluster and a three-node Apache Kafka KRaft cluster, reduced to FAILOVER_REDUCED_CLIENTS (~2.5 min);
WIREBROKER_COMPAT_FAILOVER=full runs every client that expresses it (~5 min), as `python -m compat_tests` does.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from compat_tests import report
from compat_tests.clients import Client, Invocation
from compat_tests.cluster import FailoverKiller, metadata_v1
from compat_tests.reference_kafka import broker_properties
from compat_tests.results import Cell, MatrixResult, SuiteResult
from compat_tests.runner import run_driver, run_failover_column, run_wirebroker_matrix
from compat_tests.wirebroker_broker import Wirebroker

# kafka-python integration tests that fail on wirebroker for a reason an open issue covers; any other failure fails.
KNOWN_SUITE_GAPS: dict[str, str] = {}  # test id -> the open issue (the transactional tests pass since issue 12)
MATRIX_TIMEOUT_S = 1800
# librdkafka and franz-go: the two quickest drivers to start, from two independent client implementations.
FAILOVER_REDUCED_CLIENTS = ("confluent-kafka", "franz-go")
FAILOVER_TIMEOUT_S = 1200
# What the runner cannot install itself (kcat it installs with apt-get when root).
TOOLCHAINS = {
    "java": "a JDK 17 (apt-get install openjdk-17-jdk-headless)",
    "javac": "a JDK 17 (apt-get install openjdk-17-jdk-headless)",
    "mvn": "Maven (apt-get install maven)",
    "go": "Go 1.22 or newer",
    "node": "Node.js 18 or newer (apt-get install nodejs)",
    "npm": "npm (apt-get install npm)",
}


def fake_driver(tmp_path: Path, body: str) -> Invocation:
    script = tmp_path / "driver.py"
    script.write_text(body)
    return Invocation([sys.executable, str(script)])


def test_run_driver_reads_result_lines_and_reports_missing_scenarios(tmp_path: Path) -> None:
    invocation = fake_driver(tmp_path, (
        "import json, sys\n"
        "print('a log line that is not a result')\n"
        "print(json.dumps({'scenario': 'metadata', 'ok': True, 'detail': 'fine', 'seconds': 0.1}))\n"
        "sys.stderr.write('crashed before seek\\n')\n"
        "sys.exit(3)\n"))
    client = Client("fake", "Python", ("metadata", "seek"), lambda _: invocation)
    cells = run_driver(invocation, client, ["metadata", "seek"], "kafka", "127.0.0.1:1", "p",
                       tmp_path / "fake.stderr")
    assert [(c.scenario, c.ok) for c in cells] == [("metadata", True), ("seek", False)]
    assert cells[0].detail == "fine"
    assert "exited 3" in cells[1].detail and "crashed before seek" in cells[1].detail


def test_report_shows_both_brokers_and_failure_text(tmp_path: Path) -> None:
    result = MatrixResult(brokers={"wirebroker": {"name": "wirebroker", "bootstrap": "127.0.0.1:1"},
                                   "kafka": {"name": "Apache Kafka 4.3.1", "bootstrap": "127.0.0.1:2"}},
                          clients=["kcat"], scenarios=["roundtrip", "admin"], started_at="now")
    result.cells = [Cell("wirebroker", "kcat", "roundtrip", False, 'headers <lost> "empty"'),
                    Cell("kafka", "kcat", "roundtrip", True, "10 records")]
    result.suites = [SuiteResult("kafka", passed=54, skipped=1, note="KAFKA_VERSION=4.3")]
    paths = report.write_all(result, tmp_path)
    markdown, data, page = (p.read_text() for p in paths)
    assert "| kcat | ❌ ✅ | · · |" in markdown
    assert 'headers <lost> "empty"' in markdown
    assert json.loads(data)["cells"][0]["detail"] == 'headers <lost> "empty"'
    assert json.loads(data)["suites"][0]["ok"] is True
    assert 'title="wirebroker · kcat · roundtrip (0.0s): headers &lt;lost&gt; &quot;empty&quot;"' in page


def test_reference_broker_properties_are_single_node_kraft() -> None:
    props = dict(line.split("=", 1) for line in
                 broker_properties(9101, 9102, Path("/data"), settings={"num.partitions": 4}).splitlines())
    assert props["process.roles"] == "broker,controller"
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:9101,CONTROLLER://127.0.0.1:9102"
    assert props["controller.quorum.bootstrap.servers"] == "127.0.0.1:9102"
    assert props["group.initial.rebalance.delay.ms"] == "0"
    assert props["num.partitions"] == "4"


def test_reference_broker_properties_of_a_three_node_quorum_name_static_voters() -> None:
    voters = "1@127.0.0.1:9102,2@127.0.0.1:9104,3@127.0.0.1:9106"
    props = dict(line.split("=", 1) for line in
                 broker_properties(9103, 9104, Path("/data"), node_id=2, voters=voters).splitlines())
    assert props["controller.quorum.voters"] == voters
    assert "controller.quorum.bootstrap.servers" not in props
    assert props["node.id"] == "2"


def test_report_shows_the_three_broker_column_beside_single_broker_cells(tmp_path: Path) -> None:
    result = MatrixResult(brokers={key: {"name": key, "bootstrap": "127.0.0.1:1"}
                                   for key in ("wirebroker", "kafka", "wirebroker-3", "kafka-3")},
                          clients=["franz-go"], scenarios=["roundtrip", "failover"], started_at="now")
    result.cells = [Cell("wirebroker", "franz-go", "roundtrip", True, ""),
                    Cell("kafka", "franz-go", "roundtrip", True, ""),
                    Cell("wirebroker-3", "franz-go", "failover", False, "lost 3 records"),
                    Cell("kafka-3", "franz-go", "failover", True, "")]
    markdown, _data, page = (p.read_text() for p in report.write_all(result, tmp_path))
    assert "| franz-go | ✅ ✅ | ❌ ✅ |" in markdown
    assert "in failover: wirebroker ×3 / Apache Kafka ×3" in markdown
    assert "wirebroker ×3 · franz-go · failover: lost 3 records" in markdown
    assert ('<span class="cell fail" title="wirebroker ×3 · franz-go · failover (0.0s): lost 3 records">W3</span>'
            in page)


def test_failover_killer_kills_the_leader_the_driver_names_and_restarts_it(tmp_path: Path) -> None:
    """The runner's half of the handshake against a real single broker standing in for a cluster member."""
    broker = Wirebroker(tmp_path / "broker", settings={"num.partitions": 1, "auto.create.topics.enable": "true"})

    class OneBroker:
        name = "one broker"

        def leader_of(self, topic: str, partition: int) -> int:
            return metadata_v1("127.0.0.1", broker.port, [topic])[1][topic][partition]

        def kill(self, node_id: int) -> None:
            broker.kill()

        def restart(self, node_id: int) -> None:
            broker.start()

    with broker:
        killer = FailoverKiller(OneBroker(), tmp_path / "handshake")
        killer.start()
        (tmp_path / "handshake" / "ready").write_text("auto-created")
        killer.join(60)
        assert (tmp_path / "handshake" / "killed").read_text() == "0"
        assert broker.process.poll() is not None, "the leader still runs"
        killer.finish()
        assert broker.process.poll() is None and metadata_v1("127.0.0.1", broker.port, None)[0] == [0]


@pytest.mark.slow
@pytest.mark.timeout(FAILOVER_TIMEOUT_S)
def test_failover_column_green_on_kafka_is_green_on_wirebroker() -> None:
    missing = [f"{tool}: install {hint}" for tool, hint in TOOLCHAINS.items() if shutil.which(tool) is None]
    if missing:
        pytest.fail("the failover column needs toolchains that are missing:\n" + "\n".join(missing))
    full = os.environ.get("WIREBROKER_COMPAT_FAILOVER") == "full"
    result = run_failover_column(None if full else FAILOVER_REDUCED_CLIENTS)
    print("\n".join(report.summary_lines(result)))
    kafka, wirebroker = _cells(result, "kafka-3"), _cells(result, "wirebroker-3")
    assert kafka and len(kafka) == len(wirebroker), f"cells: kafka-3 {sorted(kafka)}, wirebroker-3 {sorted(wirebroker)}"
    wrong = [f"{c.client}: {c.detail}" for c in kafka.values() if not c.ok]
    assert not wrong, "failover cells red on a three-node Apache Kafka are wrong scenarios:\n" + "\n".join(wrong)
    red = [f"{c.client}: {c.detail}" for c in wirebroker.values() if not c.ok]
    assert not red, "failover cells green on Apache Kafka ×3 and red on wirebroker ×3:\n" + "\n".join(red)


@pytest.fixture(scope="module")
def matrix() -> MatrixResult:
    missing = [f"{tool}: install {hint}" for tool, hint in TOOLCHAINS.items() if shutil.which(tool) is None]
    if missing:
        pytest.fail("the compatibility matrix needs toolchains that are missing:\n" + "\n".join(missing))
    result = run_wirebroker_matrix()
    report.write_all(result)
    return result


def _cells(result: MatrixResult, broker: str) -> dict[tuple[str, str], Cell]:
    return {(c.client, c.scenario): c for c in result.cells if c.broker == broker}


@pytest.mark.slow
@pytest.mark.timeout(MATRIX_TIMEOUT_S)
def test_every_scenario_is_green_on_apache_kafka(matrix: MatrixResult) -> None:
    wrong = [f"{c.client} · {c.scenario}: {c.detail}" for c in _cells(matrix, "kafka").values() if not c.ok]
    assert not wrong, "scenarios that fail on Apache Kafka are wrong scenarios:\n" + "\n".join(wrong)


@pytest.mark.slow
@pytest.mark.timeout(MATRIX_TIMEOUT_S)
def test_every_cell_green_on_kafka_is_green_on_wirebroker(matrix: MatrixResult) -> None:
    kafka, wirebroker = _cells(matrix, "kafka"), _cells(matrix, "wirebroker")
    red = []
    for key, cell in kafka.items():
        ours = wirebroker.get(key)
        if cell.ok and not (ours and ours.ok):
            red.append(f"{key[0]} · {key[1]}: {ours.detail if ours else 'not run'}")
    assert not red, f"{len(red)} cells green on Apache Kafka are red on wirebroker:\n" + "\n".join(red)


@pytest.mark.slow
@pytest.mark.timeout(MATRIX_TIMEOUT_S)
def test_kafka_python_suite_passes_on_wirebroker_where_it_passes_on_kafka(matrix: MatrixResult) -> None:
    suites = {s.broker: s for s in matrix.suites}
    assert set(suites) == {"kafka", "wirebroker"}, f"kafka-python's suite ran on {sorted(suites)}"
    kafka_failures = {test for test, _ in suites["kafka"].failures}
    new = [f"{test}: {message}" for test, message in suites["wirebroker"].failures
           if test not in kafka_failures and test not in KNOWN_SUITE_GAPS]
    assert suites["wirebroker"].passed > 0 and not new, (
        f"kafka-python's integration tests failing on wirebroker only ({suites['wirebroker'].note}):\n"
        + "\n".join(new))
