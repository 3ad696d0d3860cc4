"""The quietness accounting (bench/quietness.py) on synthetic /proc trees: whose ticks count as the benchmark's own,
others' share of the cores between two readings, and the report's refusal to give a ratio for a busy run."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.quietness import between, sample, system_ticks, tree_ticks
from bench.report_rounds import NOT_COMPARABLE, comparable, ratio_cell, rounds_cell


def _proc(root: Path, cpu: tuple[int, ...], processes: dict[int, tuple[int, str, int, int, int, int]]) -> Path:
    """A fake /proc: the cpu line (user nice system idle iowait irq softirq steal guest guest_nice) and, per pid,
    (ppid, comm, utime, stime, cutime, cstime)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "stat").write_text("cpu  " + " ".join(map(str, cpu)) + "\ncpu0 1 2 3 4\nintr 5\n")
    for old in root.iterdir():
        if old.name.isdigit() and int(old.name) not in processes:
            (old / "stat").unlink()
            old.rmdir()
    for pid, (ppid, comm, utime, stime, cutime, cstime) in processes.items():
        (root / str(pid)).mkdir(exist_ok=True)
        fields = ["S", ppid, 1, 1, 0, -1, 4194304, 0, 0, 0, 0, utime, stime, cutime, cstime, 20, 0, 1, 0]
        (root / str(pid) / "stat").write_text(f"{pid} ({comm}) " + " ".join(map(str, fields)) + "\n")
    (root / "self").mkdir(exist_ok=True)  # not a pid: skipped
    return root


def test_system_ticks_count_idle_and_iowait_as_not_busy_and_leave_guest_inside_user(tmp_path):
    proc = _proc(tmp_path, (100, 10, 50, 800, 40, 5, 5, 0, 30, 0), {})
    assert system_ticks(proc) == (170, 1010)


def test_tree_ticks_sum_the_roots_and_their_descendants_with_reaped_children(tmp_path):
    proc = _proc(tmp_path, (0,) * 10, {
        1: (0, "init", 1000, 1000, 0, 0),
        50: (1, "python -m bench", 10, 5, 7, 3),  # cutime/cstime: load tools it has reaped
        60: (50, "java (broker)", 200, 20, 0, 0),
        61: (60, "broker) child", 4, 1, 0, 0),  # a ')' in the name does not shift the fields
        70: (50, "java", 30, 3, 0, 0),
        80: (1, "someone else", 900, 100, 0, 0),
    })
    assert tree_ticks((50,), proc) == 25 + 220 + 5 + 33
    assert tree_ticks((50, 60), proc) == 283  # a root that is also a descendant counts once
    assert tree_ticks((999,), proc) == 0  # gone


def test_others_share_is_busy_minus_own_over_all_the_ticks(tmp_path):
    proc = tmp_path / "proc"
    _proc(proc, (1000, 0, 0, 1000, 0, 0, 0, 0, 0, 0), {50: (1, "bench", 100, 0, 0, 0), 80: (1, "other", 0, 0, 0, 0)})
    first = sample((50,), proc)
    # 2 cores x 100 ticks: our tree used 60, another process 30, 110 idle.
    _proc(proc, (1090, 0, 0, 1110, 0, 0, 0, 0, 0, 0), {50: (1, "bench", 160, 0, 0, 0), 80: (1, "other", 30, 0, 0, 0)})
    quietness = between(first, sample((50,), proc), max_others=0.10)
    assert quietness.others_share == pytest.approx(30 / 200)
    assert quietness.own_share == pytest.approx(60 / 200)
    assert not quietness.quiet
    assert between(first, sample((50,), proc), max_others=0.20).quiet


def test_a_load_tool_that_ends_and_is_reaped_stays_counted_as_ours(tmp_path):
    proc = tmp_path / "proc"
    _proc(proc, (0, 0, 0, 0, 0, 0, 0, 0, 0, 0), {50: (1, "bench", 10, 0, 0, 0), 70: (50, "java", 0, 0, 0, 0)})
    first = sample((50,), proc)
    # The JVM used 150 ticks, exited and was reaped: its ticks are now the harness's cutime/cstime.
    _proc(proc, (160, 0, 0, 40, 0, 0, 0, 0, 0, 0), {50: (1, "bench", 20, 0, 120, 30)})
    quietness = between(first, sample((50,), proc))
    assert quietness.others_share == 0
    assert quietness.quiet


def test_own_ticks_read_a_moment_after_the_machine_never_make_a_negative_share(tmp_path):
    proc = tmp_path / "proc"
    _proc(proc, (0, 0, 0, 0, 0, 0, 0, 0, 0, 0), {50: (1, "bench", 0, 0, 0, 0)})
    first = sample((50,), proc)
    _proc(proc, (100, 0, 0, 100, 0, 0, 0, 0, 0, 0), {50: (1, "bench", 101, 0, 0, 0)})
    assert between(first, sample((50,), proc)).others_share == 0


def test_an_empty_window_is_not_busy(tmp_path):
    proc = _proc(tmp_path, (5, 0, 0, 5, 0, 0, 0, 0, 0, 0), {})
    one = sample((), proc)
    assert between(one, one).window_ticks == 0 and between(one, one).quiet


def _entry(figure: float, quiet: bool, others: float) -> dict:
    return {"figures": {"records_per_s": figure},
            "quietness": {"comparable": quiet, "during": {"others_share": others}}}


def test_the_report_gives_no_ratio_unless_both_runs_were_quiet():
    quiet, busy = _entry(100, True, 0.02), _entry(50, False, 0.6)
    assert ratio_cell(quiet, quiet, "2.00") == "2.00"
    assert NOT_COMPARABLE in ratio_cell(quiet, busy, "2.00")
    assert NOT_COMPARABLE in ratio_cell(busy, quiet, "0.50")
    assert NOT_COMPARABLE in ratio_cell({"figures": {}}, quiet, "1.00")  # taken before the gate existed
    assert ratio_cell(None, quiet, "–") == "–"
    assert not comparable({"comparable": False, "quietness": {"comparable": True}})


def test_rounds_cell_shows_every_round_its_quietness_and_the_spread_of_the_quiet_ones():
    combined = {"rounds": [{"figure": 100.0, "comparable": True, "others_share": 0.02},
                           {"figure": 300.0, "comparable": False, "others_share": 0.55},
                           {"figure": 120.0, "comparable": True, "others_share": 0.05}]}
    cell = rounds_cell(combined)
    assert cell.startswith("100.0 (others 2%), 300.0 (others 55% ✗), 120.0 (others 5%)")
    assert cell.endswith("spread 20% over 2 quiet rounds")
    assert rounds_cell({"rounds": [50.0, 70.0]}) == "50.0 (others ? ✗), 70.0 (others ? ✗)"
