"""Run the matrix: install the clients, start each broker once, run every client × scenario cell, collect results.

    result = run_matrix()                           # what `python -m compat_tests` does: all four brokers
    result = run_wirebroker_matrix()                # for pytest: wirebroker and Apache Kafka, one broker each
    result = run_failover_column(["franz-go"])      # for pytest: the three-broker column on both clusters

Cells run in parallel (a pool of `workers` driver processes, longest first). Each driver process runs all of one
client's scenarios against one broker; its stderr goes to <runs>/<broker>/<client>.stderr and each broker's log to
<runs>/<broker>/broker.log, where <runs> is .cache/compat/runs (emptied at the start of each run).

The three-broker column runs after the single brokers stop: one cluster at a time (wirebroker-3, kafka-3), its
drivers one after another, because each driver's failover kills a broker (cluster.FailoverKiller), which is
started again before the next driver.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Sequence

from compat_tests import cluster, installers, negotiated, reference_kafka, suite_kafka_python
from compat_tests.brokers import BrokerProcess
from compat_tests.cache import DEFAULT_CACHE_DIR, InstallError
from compat_tests.clients import CLIENTS, Client, Invocation
from compat_tests.results import Cell, MatrixResult, SuiteResult
from compat_tests.scenarios import CLUSTER_SCENARIOS, SCENARIOS
from compat_tests.security_listeners import SECURED_SCENARIOS, SecurityListeners
from compat_tests.wirebroker_broker import Wirebroker

log = logging.getLogger(__name__)

SINGLE_BROKER_KEYS = ("wirebroker", "kafka")
# The three-broker column: the same two sides as clusters, for the scenarios that kill a broker.
CLUSTER_KEYS = ("wirebroker-3", "kafka-3")
BROKER_KEYS = (*SINGLE_BROKER_KEYS, *CLUSTER_KEYS)
# Settings both brokers get: what kafka-python's own test fixture configures and its tests assume (node.id=0 is
# on the command line already), and no initial rebalance delay so group scenarios do not wait 3 s per join.
COMMON_BROKER_SETTINGS = {
    "num.partitions": 4,
    "group.min.session.timeout.ms": 1000,
    "group.initial.rebalance.delay.ms": 0,
    # kafka-python's ACL test needs an authorizer that allows everything while no ACL matches (both brokers enforce
    # the ACLs; without an authorizer both answer the ACL APIs SECURITY_DISABLED).
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "allow.everyone.if.no.acl.found": "true",
    # The compacted column needs two cleanings in a row; Kafka's default of 15 s between the cleaner's looks would
    # make each of its cells last about 30 s.
    "log.cleaner.backoff.ms": 1000,
}
# A multi-node KRaft quorum needs super.users for its own requests under an authorizer; no cluster scenario
# touches ACLs, so the clusters run without one.
CLUSTER_BROKER_SETTINGS = {k: v for k, v in COMMON_BROKER_SETTINGS.items()
                           if k not in ("authorizer.class.name", "allow.everyone.if.no.acl.found")}
DEFAULT_WORKERS = 3
SUITE_NAME = "kafka-python-suite"
# kafka-python's suite took 17-22 s on either broker in the committed report; tasks start longest first.
SUITE_EXPECTED_SECONDS = 25.0


def run_matrix(brokers: Sequence[str] = BROKER_KEYS, clients: Iterable[str] | None = None,
               scenarios: Iterable[str] | None = None, *, fast: bool = False, suite: bool = True,
               workers: int = DEFAULT_WORKERS, cache_dir: Path = DEFAULT_CACHE_DIR) -> MatrixResult:
    """Install, start the brokers, run every selected cell and kafka-python's suite; return all results."""
    started = time.monotonic()
    result = MatrixResult(started_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    chosen = _choose_clients(clients, fast)
    wanted = list(scenarios) if scenarios else list(SCENARIOS)
    # A scenario is a column only where a broker that runs it was chosen (failover: the clusters, others: single).
    runnable = {s for s in SCENARIOS
                if any(k in (CLUSTER_KEYS if s in CLUSTER_SCENARIOS else SINGLE_BROKER_KEYS) for k in brokers)}
    result.scenarios = [s for s in SCENARIOS if s in wanted and s in runnable and any(s in c.scenarios for c in chosen)]
    result.clients = [c.name for c in chosen]
    run_suite = suite and not fast and (clients is None or SUITE_NAME in clients)

    invocations, install_errors = _install(chosen, cache_dir, run_suite)
    result.timings["install_s"] = round(time.monotonic() - started, 1)
    runs_dir = cache_dir / "runs"
    shutil.rmtree(runs_dir, ignore_errors=True)
    run_id = datetime.now().strftime("%H%M%S")

    started_brokers: dict[str, BrokerProcess] = {}
    try:
        for key in (k for k in brokers if k in SINGLE_BROKER_KEYS):
            broker_started = time.monotonic()
            started_brokers[key] = _start_broker(key, runs_dir / key, cache_dir,
                                                 secured=bool(SECURED_SCENARIOS & set(result.scenarios)))
            result.timings[f"start_{key}_s"] = round(time.monotonic() - broker_started, 1)
            result.brokers[key] = {"name": started_brokers[key].name, "bootstrap": started_brokers[key].bootstrap}
        single = [s for s in result.scenarios if s not in CLUSTER_SCENARIOS]
        tasks = _tasks(started_brokers, chosen, single, invocations, install_errors, run_id, runs_dir)
        if run_suite:
            tasks += [_suite_task(key, broker, invocations.get(SUITE_NAME), install_errors.get(SUITE_NAME), runs_dir)
                      for key, broker in started_brokers.items()]
        cells_started = time.monotonic()
        for outcome in _run_parallel(tasks, workers):
            if isinstance(outcome, SuiteResult):
                result.suites.append(outcome)
            else:
                result.cells.extend(outcome)
        result.timings["cells_s"] = round(time.monotonic() - cells_started, 1)
    finally:
        for broker in started_brokers.values():
            broker.stop()
    client_ids = {c.name: negotiated.client_id(c.name, _prefix(run_id, c.name)) for c in chosen}
    result.cells = negotiated.check_metadata_cells(result.cells, _request_logs(started_brokers, client_ids.values()),
                                                   client_ids)
    cluster_scenarios = [s for s in result.scenarios if s in CLUSTER_SCENARIOS]
    for key in (k for k in brokers if k in CLUSTER_KEYS and cluster_scenarios):
        cluster_started = time.monotonic()
        result.cells.extend(_run_on_cluster(key, chosen, cluster_scenarios, invocations, install_errors,
                                            f"c{run_id}", runs_dir / key, cache_dir, result))
        result.timings[f"{key}_s"] = round(time.monotonic() - cluster_started, 1)
    result.cells.sort(key=lambda c: (c.broker, result.clients.index(c.client), result.scenarios.index(c.scenario)))
    result.timings["total_s"] = round(time.monotonic() - started, 1)
    return result


def run_wirebroker_matrix(**options) -> MatrixResult:
    """For pytest: the single-broker matrix against wirebroker and, as the reference, Apache Kafka."""
    return run_matrix(brokers=SINGLE_BROKER_KEYS, **options)


def run_failover_column(clients: Iterable[str] | None = None, **options) -> MatrixResult:
    """For pytest: the three-broker column (failover) on a wirebroker cluster and an Apache Kafka cluster."""
    return run_matrix(brokers=CLUSTER_KEYS, clients=clients, scenarios=CLUSTER_SCENARIOS, suite=False, **options)


def _choose_clients(names: Iterable[str] | None, fast: bool) -> list[Client]:
    if names is None:
        return [c for c in CLIENTS.values() if not (fast and c.heavy)]
    names = list(names)
    unknown = [n for n in names if n not in CLIENTS and n != SUITE_NAME]
    if unknown:
        raise ValueError(f"unknown clients {unknown}; known: {', '.join([*CLIENTS, SUITE_NAME])}")
    return [CLIENTS[n] for n in names if n in CLIENTS]


def _install(chosen: list[Client], cache_dir: Path, run_suite: bool
             ) -> tuple[dict[str, object], dict[str, str]]:
    """Install each client (two at a time: most of it is waiting on registries); errors become red cells.

    Installs that clients share (the venv, the Go build, the tools' jars) serialize themselves (installers.py).
    """
    installs: dict[str, Callable[[], object]] = {c.name: (lambda c=c: c.install(cache_dir)) for c in chosen}
    if run_suite:
        installs[SUITE_NAME] = lambda: _install_suite(cache_dir)
    invocations: dict[str, object] = {}
    errors: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {pool.submit(fn): name for name, fn in installs.items()}
        for future in as_completed(futures):
            name = futures[future]
            try:
                invocations[name] = future.result()
            except (InstallError, OSError, subprocess.SubprocessError) as exc:
                log.error("could not install %s: %s", name, exc)
                errors[name] = f"install failed: {exc}"
    return invocations, errors


def _install_suite(cache_dir: Path) -> tuple[Path, Path]:
    python = installers.python_env(cache_dir)
    return python, suite_kafka_python.prepare(python, cache_dir)


def _start_broker(key: str, work_dir: Path, cache_dir: Path, secured: bool = False) -> BrokerProcess:
    """The broker of one column; `secured`: with the SASL_PLAINTEXT and SSL listeners of security_listeners.py."""
    if key == "kafka":
        broker = reference_kafka.ReferenceKafka(work_dir, reference_kafka.install_jars(cache_dir),
                                                settings=COMMON_BROKER_SETTINGS, log_requests=True)
    elif key == "wirebroker":
        broker = Wirebroker(work_dir, settings=COMMON_BROKER_SETTINGS, log_requests=True)
    else:
        raise ValueError(f"unknown broker {key!r}; known: {', '.join(BROKER_KEYS)}")
    if not secured:
        return broker.start()
    security = SecurityListeners.create(work_dir)
    broker.settings.update(security.broker_settings(broker.port, getattr(broker, "controller_port", None)))
    broker.start()
    security.create_scram_user(broker.bootstrap)
    broker.driver_env = security.driver_env()
    return broker


def _request_logs(brokers: dict[str, BrokerProcess], client_ids: Iterable[str]
                  ) -> dict[str, Iterable[tuple[str | None, int, int]]]:
    """The requests each single broker logged from the metadata cells' clients (compat_tests/negotiated.py)."""
    wanted = set(client_ids)
    logs: dict[str, Iterable[tuple[str | None, int, int]]] = {}
    if "wirebroker" in brokers:
        logs["wirebroker"] = negotiated.wirebroker_requests(brokers["wirebroker"].log_path, wanted)
    if "kafka" in brokers:
        logs["kafka"] = negotiated.kafka_requests(brokers["kafka"].request_log_path, wanted)
    return logs


Task = tuple[float, Callable[[], object]]


def _run_on_cluster(key: str, chosen: list[Client], scenarios: list[str], invocations: dict[str, object],
                    install_errors: dict[str, str], prefix: str, work_dir: Path, cache_dir: Path,
                    result: MatrixResult) -> list[Cell]:
    """Start the cluster once and run its clients one after another: each kills a broker, brought back after."""
    cells: list[Cell] = []
    if key == "kafka-3":
        brokers = cluster.kafka_cluster(work_dir, reference_kafka.install_jars(cache_dir), CLUSTER_BROKER_SETTINGS)
    else:
        brokers = cluster.WirebrokerCluster(work_dir, CLUSTER_BROKER_SETTINGS)
    result.brokers[key] = {"name": brokers.name, "bootstrap": brokers.bootstrap}
    try:
        brokers.start()
    except (cluster.ClusterError, OSError, RuntimeError) as exc:
        brokers.stop()
        return [Cell(key, c.name, s, False, f"cluster did not start: {exc}")
                for c in chosen for s in scenarios if s in c.scenarios]
    try:
        for client in chosen:
            names = [s for s in scenarios if s in client.scenarios]
            if not names:
                continue
            if client.name in install_errors:
                cells += [Cell(key, client.name, s, False, install_errors[client.name]) for s in names]
                continue
            killer = cluster.FailoverKiller(brokers, work_dir / f"{client.name}.handshake")
            killer.start()
            invocation = invocations[client.name]
            invocation = Invocation(invocation.command, {**invocation.env, "COMPAT_FAILOVER_DIR": str(killer.dir)})
            ran = run_driver(invocation, client, names, key, brokers.bootstrap, f"{prefix}.{client.name}",
                             work_dir / f"{client.name}.stderr")
            try:
                killer.finish()
            except (cluster.ClusterError, OSError, RuntimeError) as exc:
                ran = [Cell(c.broker, c.client, c.scenario, False, f"{c.detail}; the killed broker did not come "
                            f"back: {exc}", c.seconds) for c in ran]
                cells += ran
                break
            if killer.error:
                ran = [Cell(c.broker, c.client, c.scenario, False, f"no leader to kill: {killer.error}", c.seconds)
                       for c in ran]
            cells += ran
    finally:
        brokers.stop()
    return cells


def _tasks(brokers: dict[str, BrokerProcess], chosen: list[Client], scenarios: list[str],
           invocations: dict[str, object], install_errors: dict[str, str], run_id: str, runs_dir: Path
           ) -> list[Task]:
    tasks: list[Task] = []
    for key, broker in brokers.items():
        for client in chosen:
            names = [s for s in scenarios if s in client.scenarios]
            if not names:
                continue
            if client.name in install_errors:
                error = install_errors[client.name]
                tasks.append((0.0, lambda k=key, c=client, n=names, e=error:
                              [Cell(k, c.name, s, False, e) for s in n]))
                continue
            prefix = _prefix(run_id, client.name)
            stderr_path = runs_dir / key / f"{client.name}.stderr"
            tasks.append((client.expected_seconds,
                          lambda k=key, b=broker.bootstrap, c=client, n=names, p=prefix, e=stderr_path, br=broker:
                          run_driver(_with_env(invocations[c.name], br), c, n, k, b, p, e)))
    return tasks


def _prefix(run_id: str, client: str) -> str:
    """What a driver's topics, and its metadata clients' ids, start with: the same on every broker of one run."""
    return f"c{run_id}.{client}"


def _with_env(invocation: Invocation, broker: BrokerProcess) -> Invocation:
    """The driver's invocation with what the broker tells drivers (the secured listeners), if anything."""
    return Invocation(invocation.command, {**invocation.env, **getattr(broker, "driver_env", {})})


def _suite_task(key: str, broker: BrokerProcess, installed: object, install_error: str | None,
                runs_dir: Path) -> Task:
    if installed is None:
        return (0.0, lambda: SuiteResult(broker=key, errors=1, note=install_error or "not installed"))
    python, source = installed
    return (SUITE_EXPECTED_SECONDS,
            lambda: suite_kafka_python.run(python, source, key, broker.bootstrap, runs_dir / key))


def _run_parallel(tasks: list[Task], workers: int) -> Iterable[object]:
    tasks = sorted(tasks, key=lambda t: -t[0])  # longest first keeps the pool busy to the end
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(fn) for _, fn in tasks]
        for future in as_completed(futures):
            yield future.result()


def run_driver(invocation: Invocation, client: Client, scenarios: list[str], broker: str, bootstrap: str,
               prefix: str, stderr_path: Path) -> list[Cell]:
    """Run one driver process for a list of scenarios; a scenario without a result line is a red cell."""
    stderr_path.parent.mkdir(parents=True, exist_ok=True)
    cmd = [*invocation.command, ",".join(scenarios), bootstrap, prefix]
    timeout = client.timeout(len(scenarios))
    log.info("%s on %s: %s", client.name, broker, ",".join(scenarios))
    started = time.monotonic()
    with open(stderr_path, "w") as stderr:
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=stderr, text=True, timeout=timeout,
                                  env={**os.environ, **invocation.env}, stdin=subprocess.DEVNULL)
            stdout, ending = proc.stdout, f"exited {proc.returncode}"
        except subprocess.TimeoutExpired as exc:
            stdout = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            ending = f"killed after {timeout:.0f}s"
    cells = {c.scenario: c for c in _parse_lines(stdout, broker, client.name)}
    missing_detail = f"no result: driver {ending}; last stderr: {_tail(stderr_path)}"
    log.info("%s on %s done in %.1fs", client.name, broker, time.monotonic() - started)
    return [cells.get(s) or Cell(broker, client.name, s, False, missing_detail) for s in scenarios]


def _parse_lines(stdout: str, broker: str, client: str) -> list[Cell]:
    cells = []
    for raw in stdout.splitlines():
        line = raw.strip()
        if not line.startswith("{"):
            continue
        try:
            data = json.loads(line)
            cells.append(Cell(broker, client, data["scenario"], bool(data["ok"]), str(data.get("detail", "")),
                              float(data.get("seconds", 0.0))))
        except (ValueError, KeyError):
            log.warning("%s printed a line that is not a result: %s", client, line[:200])
    return cells


def _tail(path: Path, chars: int = 600) -> str:
    try:
        return path.read_text(errors="replace")[-chars:].strip() or "(empty)"
    except OSError:
        return "(none)"
