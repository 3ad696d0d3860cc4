"""The benchmark harness itself works: `python -m bench` runs start-up and one small produce workload against
wirebroker (Kafka's ProducerPerformance as the load) and writes a result JSON with sane figures and a report."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from compat_tests.cache import REPO_DIR

WORKLOAD = "produce-1kb-batch64k-acks1-p10"
NUM_RECORDS = 15_000  # quick mode's 15 MB of 1 KB records
MIB = 1 << 20


@pytest.mark.timeout(120)
def test_bench_runs_one_workload_against_wirebroker(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "bench", "--broker", "wirebroker", "--quick",
                           "--only", f"startup,{WORKLOAD}", "--out", str(tmp_path), "--retries", "0"],
                          cwd=REPO_DIR, capture_output=True, text=True, timeout=110)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    result = json.loads((tmp_path / "wirebroker.json").read_text())
    assert result["broker"] == "wirebroker" and result["mode"] == "quick"
    assert list(result["workloads"]) == [WORKLOAD]
    entry = result["workloads"][WORKLOAD]
    figures = entry["figures"]
    assert figures["records"] == NUM_RECORDS
    assert figures["records_per_s"] > 100
    # The tool's MB/s is records/s of 1000-byte records in MiB/s: the two figures must agree.
    assert figures["mb_per_s"] == pytest.approx(figures["records_per_s"] * 1000 / MIB, rel=0.02)
    assert figures["p50_ms"] <= figures["p99_ms"] <= figures["max_latency_ms"]
    assert entry["gb_moved"] == pytest.approx(NUM_RECORDS * 1000 / 1e9)
    # The broker did the work, on at most all the machine's cores for the workload's duration.
    assert 0 < entry["broker_cpu_s"] <= entry["wall_s"] * result["machine"]["cpus"]
    assert entry["cpu_s_per_gb"] == pytest.approx(entry["broker_cpu_s"] / entry["gb_moved"])
    assert 0 < entry["load_cpu_s"] <= entry["wall_s"] * result["machine"]["cpus"]  # the producer's JVM
    assert 10 < result["idle"]["rss_mib"] <= entry["peak_rss_mib"] <= result["end"]["hwm_mib"] < 4096
    assert 0 < result["startup"]["median_s"] < 30
    # The quietness gate measured the run; on a busy machine (no retries here) it is kept but not comparable.
    quietness = entry["quietness"]
    assert 0 <= quietness["during"]["others_share"] <= 1 and 0 < quietness["during"]["own_share"] <= 1
    assert quietness["comparable"] == (quietness["before"]["quiet"] and quietness["during"]["quiet"])

    report = (tmp_path / "RESULTS.md").read_text()
    assert WORKLOAD in report and "wirebroker" in report and "Quietness of each run" in report
    assert (tmp_path / "chart.png").read_bytes().startswith(b"\x89PNG")
