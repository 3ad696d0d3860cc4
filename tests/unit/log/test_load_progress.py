"""Start-up loading as the operator sees it: progress every 2 s while a log directory loads, then a summary."""

from __future__ import annotations

import logging

from wirebroker.log.load_progress import PROGRESS_INTERVAL_S, LoadProgress, LoadStats


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_long_load_reports_progress_every_interval_then_what_it_loaded(caplog):
    clock, stats = Clock(), LoadStats()
    progress = LoadProgress("/data", 5, had_clean_shutdown=False, stats=stats, clock=clock)
    with caplog.at_level(logging.INFO, logger="wirebroker.log.manager"):
        for topic, seconds in [("a", 0.5), ("a", 1.6), ("b", 0.5), ("b", 1.0), ("c", 3.0)]:
            clock.now += seconds
            progress.loaded(topic, segments=2)
        progress.finished()
    # A report once 2 s have passed (at the second log); none at the last, which the summary reports.
    assert [record.getMessage() for record in caplog.records] == [
        "Loading logs from /data: 2 of 5 loaded (4 segments) in 2.1 s, recovering after an unclean shutdown",
        "Loaded 5 logs (10 segments) from /data in 6600 ms (unclean shutdown)",
    ]
    assert (stats.logs, stats.segments, stats.topics, stats.unclean_dirs) == (5, 10, {"a", "b", "c"}, 1)
    assert abs(stats.seconds - 6.6) < 1e-9


def test_a_quick_load_is_one_line_and_stats_add_up_over_dirs(caplog):
    clock, stats = Clock(), LoadStats()
    with caplog.at_level(logging.INFO, logger="wirebroker.log.manager"):
        for log_dir in ("/one", "/two"):
            progress = LoadProgress(log_dir, 2, had_clean_shutdown=True, stats=stats, clock=clock)
            for _ in range(2):
                clock.now += PROGRESS_INTERVAL_S / 10
                progress.loaded("t", segments=1)
            progress.finished()
    assert [r.getMessage() for r in caplog.records] == [
        "Loaded 2 logs (2 segments) from /one in 400 ms (clean shutdown)",
        "Loaded 2 logs (2 segments) from /two in 400 ms (clean shutdown)",
    ]
    assert (stats.logs, stats.segments, stats.topics, stats.unclean_dirs) == (4, 4, {"t"}, 0)
