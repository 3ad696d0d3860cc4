"""The benchmark harness's pure parts: reading the Kafka tools' output, choosing workloads, combining rounds,
keeping earlier figures, summarising profiles, and the /proc readers on this very process."""

from __future__ import annotations

import json
import os

import pytest

from bench.__main__ import merge_into
from bench.load import LoadError, consumer_figures, e2e_figures, producer_figures
from bench.procstats import cpu_seconds, memory_mib
from bench.profile_broker import summarise_folded
from bench.runner import combine_rounds, parse_settings
from bench.workloads import select, suite

# Real output of Kafka 4.3.1's tools (a progress line, then the summary), captured against wirebroker.
PRODUCER_OUT = """\
41918 records sent, 8287.5 records/sec (7.90 MB/sec), 366.0 ms avg latency, 1640.0 ms max latency.
100000 records sent, 13080.444735 records/sec (12.47 MB/sec), 740.64 ms avg latency, 1710.00 ms max latency, \
696 ms 50th, 1466 ms 95th, 1679 ms 99th, 1703 ms 99.9th.
"""
CONSUMER_OUT = """\
start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, \
fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
2026-11-23 04:50:57:651, 2026-11-23 04:51:02:611, 0.1907, 0.0385, 2000, 403.2258, 4605, 355, 0.5373, 5633.8028
"""
E2E_OUT = """\
Topic "t2" does not exist. Will create topic with 1 partition(s) and replication factor = 1
0\t182.483816
Avg latency: 13.0202 ms
Percentiles: 50th = 8, 99th = 182, 99.9th = 182
"""


def test_producer_figures_come_from_the_summary_line_not_a_progress_line():
    figures = producer_figures(PRODUCER_OUT)
    assert figures["records"] == 100000
    assert figures["records_per_s"] == pytest.approx(13080.444735)
    assert figures["mb_per_s"] == pytest.approx(12.47)
    assert (figures["p50_ms"], figures["p95_ms"], figures["p99_ms"], figures["p999_ms"]) == (696, 1466, 1679, 1703)


def test_consumer_figures_pair_the_header_with_the_values():
    figures = consumer_figures(CONSUMER_OUT)
    assert figures["records"] == 2000
    assert figures["mb"] == pytest.approx(0.1907)
    assert figures["rebalance_ms"] == 4605 and figures["fetch_ms"] == 355
    assert figures["fetch_mb_per_s"] == pytest.approx(0.5373)
    assert figures["fetch_records_per_s"] == pytest.approx(5633.8028)


def test_e2e_figures():
    assert e2e_figures(E2E_OUT) == {"mean_ms": 13.0202, "p50_ms": 8, "p99_ms": 182, "p999_ms": 182}


def test_a_tool_without_figures_is_an_error_that_shows_its_output():
    with pytest.raises(LoadError, match="Connection refused"):
        producer_figures("[WARN] Connection refused\n")
    with pytest.raises(LoadError):
        consumer_figures("only a header, a, b, c, d, e, f, g, h, i\n")


def test_select_by_shell_patterns_keeps_suite_order():
    workloads = suite("quick")
    chosen = select(workloads, ["consume-1kb-p10*", "startup"])
    assert [w.name for w in chosen] == ["startup", "consume-1kb-p10", "consume-1kb-p100", "consume-1kb-p1000"]
    assert select(workloads, []) == workloads
    with pytest.raises(ValueError, match="no workload matches"):
        select(workloads, ["nothing-*"])


def test_suite_names_are_unique_and_quick_and_smoke_modes_move_fewer_bytes():
    full, quick, smoke = suite("full"), suite("quick"), suite("smoke")
    assert len({w.name for w in full}) == len(full)
    assert [w.name for w in full] == [w.name for w in quick] == [w.name for w in smoke]
    for big, small, tiny in zip(full, quick, smoke):
        assert tiny.num_records <= small.num_records <= big.num_records


def test_the_suite_has_the_workloads_users_run():
    kinds = {w.name: (w.kind, w.partitions, w.clients, w.record_size) for w in suite("full")}
    assert kinds["produce-100b-default-acks1-p10"] == ("produce", 10, 0, 100)
    assert kinds["produce-1kb-default-acks1-p100"][1] == 100
    assert kinds["produce-1kb-default-acks1-p1000"][1] == 1000
    assert kinds["producers-1kb-default-acks1-p10-c100"][:3] == ("producers", 10, 100)
    assert kinds["group-1kb-p8-g8"][:3] == ("group", 8, 8)
    assert kinds["consume-100b-p10"] == ("consume", 10, 0, 100)


def _round(produce_mb_per_s: float, rss: float, hwm: float, startup: float, quiet: bool = True) -> dict:
    entry = {"params": {"kind": "produce"}, "figures": {"mb_per_s": produce_mb_per_s},
             "quietness": {"comparable": quiet, "during": {"others_share": 0.02 if quiet else 0.5}}}
    return {"broker": "wirebroker", "workloads": {"p": entry}, "startup": {"runs_s": [startup]},
            "idle": {"rss_mib": rss}, "end": {"hwm_mib": hwm}, "load_average_after": [rss]}


def test_combine_rounds_reports_the_median_round_and_keeps_every_key_figure():
    combined = combine_rounds([_round(50, 30, 60, 0.3), _round(90, 35, 70, 0.2), _round(70, 32, 65, 0.4)])
    assert combined["rounds"] == 3
    assert combined["workloads"]["p"]["figures"]["mb_per_s"] == 70
    assert [r["figure"] for r in combined["workloads"]["p"]["rounds"]] == [50, 90, 70]
    assert combined["workloads"]["p"]["comparable"]
    assert combined["startup"] == {"runs_s": [0.3, 0.2, 0.4], "median_s": 0.3, "comparable": False}
    assert combined["idle"]["rss_mib"] == 32 and combined["end"]["hwm_mib"] == 70


def test_combine_rounds_takes_the_lower_middle_of_an_even_count():
    combined = combine_rounds([_round(50, 30, 60, 0.3), _round(90, 35, 70, 0.2)])
    assert combined["workloads"]["p"]["figures"]["mb_per_s"] == 50


def test_combine_rounds_takes_the_median_of_the_quiet_rounds_only():
    combined = combine_rounds([_round(50, 30, 60, 0.3), _round(500, 35, 70, 0.2, quiet=False),
                               _round(70, 32, 65, 0.4), _round(90, 32, 65, 0.4)])
    assert combined["workloads"]["p"]["figures"]["mb_per_s"] == 70
    assert [r["comparable"] for r in combined["workloads"]["p"]["rounds"]] == [True, False, True, True]
    assert combined["workloads"]["p"]["rounds"][1]["others_share"] == 0.5


def test_combine_rounds_keeps_the_start_up_runs_of_quiet_rounds_only():
    rounds = [_round(50, 30, 60, 0.3), _round(50, 30, 60, 9.0), _round(50, 30, 60, 0.5)]
    for r, quiet in zip(rounds, (True, False, True)):
        r["startup"]["quietness"] = {"comparable": quiet}
    assert combine_rounds(rounds)["startup"] == {"runs_s": [0.3, 0.5], "median_s": 0.4, "comparable": True}


def test_combine_rounds_without_a_quiet_round_is_not_comparable():
    combined = combine_rounds([_round(50, 30, 60, 0.3, quiet=False), _round(90, 35, 70, 0.2, quiet=False)])
    assert combined["workloads"]["p"]["figures"]["mb_per_s"] == 50
    assert not combined["workloads"]["p"]["comparable"]


def test_merge_into_keeps_workloads_not_run_this_time_of_the_same_mode(tmp_path):
    path = tmp_path / "wirebroker.json"
    assert merge_into(path, {"mode": "full", "workloads": {"a": 1}}) == {"mode": "full", "workloads": {"a": 1}}
    path.write_text(json.dumps({"mode": "full", "startup": {"median_s": 0.3}, "workloads": {"a": 1, "b": 2}}))
    merged = merge_into(path, {"mode": "full", "workloads": {"a": 10}})
    assert merged == {"mode": "full", "startup": {"median_s": 0.3}, "workloads": {"a": 10, "b": 2}}
    assert merge_into(path, {"mode": "quick", "workloads": {"a": 10}}) == {"mode": "quick", "workloads": {"a": 10}}


def test_parse_settings():
    assert parse_settings(["num.io.threads=0", "a=b=c"]) == {"num.io.threads": "0", "a": "b=c"}
    with pytest.raises(ValueError):
        parse_settings(["num.io.threads"])


def test_summarise_folded_counts_self_at_the_leaf_and_total_once_per_stack():
    folded = "main;handle;append 6\nmain;handle;encode 3\nmain;select 1\nmain;f;f 2\n"
    summary = summarise_folded(folded, top=10)
    assert summary.startswith("12 samples")
    self_table, total_table = summary.split("total  function")
    assert " 50.0%  append" in self_table and " 25.0%  encode" in self_table and " 16.7%  f" in self_table
    assert "100.0%  main" in total_table and " 75.0%  handle" in total_table
    assert " 16.7%  f" in total_table  # a recursive frame counts once per stack


def test_proc_readers_see_this_process_work_and_memory():
    before = cpu_seconds(os.getpid())
    sum(i * i for i in range(2_000_000))
    assert cpu_seconds(os.getpid()) > before
    memory = memory_mib(os.getpid())
    assert 1 < memory["rss_mib"] <= memory["hwm_mib"]
