"""The broker process's garbage collector: its youngest generation collected less often than CPython's default."""

import gc

from wirebroker.cli import GC_YOUNGEST_THRESHOLD, tune_garbage_collector


def test_the_broker_process_collects_its_youngest_generation_less_often_and_keeps_the_older_thresholds():
    before = gc.get_threshold()
    try:
        tune_garbage_collector()
        assert gc.get_threshold() == (GC_YOUNGEST_THRESHOLD, *before[1:])
        assert GC_YOUNGEST_THRESHOLD > 700  # CPython's default, which the benchmark found too eager
    finally:
        gc.set_threshold(*before)
