"""The compatibility matrix (compat_tests/) as tests.

The first tests check the runner's own machinery with real processes and files (fast, always run). The matrix
tests run every client × scenario on wirebroker and on Apache Kafka 4.3.1 (`run_wirebroker_matrix`, ~10 min on 2
cores, installs cached in .cache/compat) and assert that every cell green on Kafka is green on wirebroker. They are
part of every test run (`make test`, CI). A missing toolchain fails them with what to install.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from compat_tests import report
from compat_tests.clients import Client, Invocation
from compat_tests.reference_kafka import broker_properties
from compat_tests.results import Cell, MatrixResult, SuiteResult
from compat_tests.runner import run_driver, run_wirebroker_matrix

# kafka-python integration tests that fail on wirebroker for a reason an open issue covers; any other failure fails.
KNOWN_SUITE_GAPS = {
    "test.integration.test_producer_integration::test_transactional_producer_messages": "transactions: later issue",
    "test.integration.test_producer_integration::test_transactional_producer_offsets": "transactions: later issue",
}
MATRIX_TIMEOUT_S = 1800
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
