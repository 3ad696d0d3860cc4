"""Run wirebroker under yappi (every thread, CPU clock) and save the profile when it stops.

    python -m bench.yappi_broker PSTATS_PATH [wirebroker arguments ...]

For bench/profile_broker.py --profiler yappi: deterministic, so it counts every Python call (how many steps a
request takes), at the price of running the broker several times slower than it runs alone. The profile is
written in pstats format when the broker's main returns (after SIGTERM and a clean shutdown). Every wirebroker
module is imported before profiling starts, so that the profile holds the broker's work and not its imports.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import yappi

import wirebroker
from wirebroker import cli


def main(argv: list[str]) -> int:
    pstats_path, broker_args = argv[0], argv[1:]
    for module in pkgutil.walk_packages(wirebroker.__path__, "wirebroker."):
        if module.name.endswith(".__main__"):  # importing __main__ would run a broker
            continue
        try:
            importlib.import_module(module.name)
        except ModuleNotFoundError:  # an optional extra's module (wirebroker.spark without pyarrow): never used here
            pass
    yappi.set_clock_type("cpu")
    yappi.start(builtins=False, profile_threads=True)
    try:
        return cli.main(broker_args)
    finally:
        yappi.stop()
        yappi.get_func_stats().save(pstats_path, type="pstat")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
