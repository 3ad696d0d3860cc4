"""kafka-python's own integration tests (test/integration in its PyPI sdist) run against an external broker.

The sdist lacks two files that its repository has: test/__init__.py (without it `import test` finds CPython's own
`test` package) and test/service.py, whose stand-in here gives ExternalService(host, port) with no-op start, stop,
wait_for and dump_logs, and a SpawnedService that refuses. The tests find the broker through KAFKA_URI, KAFKA_VERSION
(must be the release kafka-python infers from the broker's ApiVersions, or they skip) and KAFKA_ROOT (any folder).
sasl and ssl tests are deselected: the brokers have PLAINTEXT listeners only.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from compat_tests.cache import DEFAULT_CACHE_DIR, is_fresh, mark_fresh, run_install_step
from compat_tests.results import SuiteResult

KAFKA_PYTHON_VERSION = "3.0.12"
SUITE_TIMEOUT_S = 600.0
PER_TEST_TIMEOUT_S = 120
DESELECT = "not sasl and not ssl"

SERVICE_STANDIN = '''\
"""Stand-in for kafka-python's test/service.py (not in the sdist): only the external-broker mode is used."""


class ExternalService(object):
    def __init__(self, host, port):
        self.host = host
        self.port = port

    def start(self):
        pass

    def stop(self):
        pass

    def wait_for(self, *args, **kwargs):
        return True

    def dump_logs(self):
        pass


class SpawnedService(object):
    def __init__(self, *args, **kwargs):
        raise RuntimeError("the compat matrix runs kafka-python's tests against an external broker only")
'''

INFER_VERSION = ("import sys; from kafka import KafkaAdminClient; "
                 "c = KafkaAdminClient(bootstrap_servers=sys.argv[1]); "
                 "print('.'.join(map(str, c._client.check_version()))); c.close()")


def prepare(python: Path, cache_dir: Path = DEFAULT_CACHE_DIR) -> Path:
    """Download and unpack the sdist (cached), add the two missing files; return the unpacked source folder."""
    root = cache_dir / "kafka-python-tests"
    source = root / f"kafka_python-{KAFKA_PYTHON_VERSION}"
    if is_fresh(root, KAFKA_PYTHON_VERSION):
        return source
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    run_install_step([python, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "-d", root,
                      f"kafka-python=={KAFKA_PYTHON_VERSION}"], env={"PIP_CACHE_DIR": str(cache_dir / "pip")})
    archive = next(root.glob("kafka*python-*.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(root, filter="data")
    (source / "test" / "__init__.py").touch()
    (source / "test" / "service.py").write_text(SERVICE_STANDIN)
    mark_fresh(root, KAFKA_PYTHON_VERSION)
    return source


def inferred_version(python: Path, bootstrap: str) -> str:
    """The broker release kafka-python infers from ApiVersions (what KAFKA_VERSION must say)."""
    proc = subprocess.run([str(python), "-c", INFER_VERSION, bootstrap], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"kafka-python could not check the broker's version: {proc.stderr[-1000:]}")
    return proc.stdout.strip()


def run(python: Path, source: Path, broker: str, bootstrap: str, out_dir: Path) -> SuiteResult:
    """Run test/integration against bootstrap; the junit XML and output land in out_dir."""
    started = time.monotonic()
    result = SuiteResult(broker=broker)
    try:
        version = inferred_version(python, bootstrap)
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        result.errors, result.note = 1, str(exc)
        return result
    out_dir.mkdir(parents=True, exist_ok=True)
    junit = out_dir / f"kafka-python-suite-{broker}.xml"
    kafka_root = out_dir / "kafka-root"
    kafka_root.mkdir(exist_ok=True)
    env = {**os.environ, "KAFKA_URI": f"tcp://{bootstrap}", "KAFKA_VERSION": version, "KAFKA_ROOT": str(kafka_root)}
    cmd = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test/integration",
           "-k", DESELECT, f"--timeout={PER_TEST_TIMEOUT_S}", f"--junitxml={junit}", "-o", "addopts="]
    log_path = out_dir / f"kafka-python-suite-{broker}.log"
    with open(log_path, "w") as log_file:
        try:
            subprocess.run(cmd, cwd=source, env=env, stdout=log_file, stderr=subprocess.STDOUT,
                           timeout=SUITE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            result.note = f"timed out after {SUITE_TIMEOUT_S:.0f}s; "
    result.seconds = round(time.monotonic() - started, 1)
    result.note += f"KAFKA_VERSION={version}"
    if not junit.exists():
        result.errors += 1
        result.note += f"; no junit report, see {log_path}"
        return result
    _count_junit(junit, result)
    return result


def _count_junit(junit: Path, result: SuiteResult) -> None:
    for case in ET.parse(junit).getroot().iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        outcome = next((child for child in case if child.tag in ("failure", "error", "skipped")), None)
        if outcome is None:
            result.passed += 1
        elif outcome.tag == "skipped":
            result.skipped += 1
        else:
            if outcome.tag == "failure":
                result.failed += 1
            else:
                result.errors += 1
            result.failures.append((test_id, (outcome.get("message") or outcome.text or "")[:500]))
