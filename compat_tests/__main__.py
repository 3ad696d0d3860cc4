"""`python -m compat_tests`: install the clients, run the matrix against wirebroker and Apache Kafka, write the report.

Exit status 0 when every cell that ran is green on every broker that ran (and kafka-python's suite passed), 1 if not.
"""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from compat_tests import report
from compat_tests.cache import DEFAULT_CACHE_DIR
from compat_tests.clients import CLIENTS
from compat_tests.runner import BROKER_KEYS, DEFAULT_WORKERS, SUITE_NAME, run_matrix
from compat_tests.scenarios import SCENARIOS


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m compat_tests", description=__doc__)
    parser.add_argument("--broker", choices=[*BROKER_KEYS, "both"], default="both",
                        help="which broker(s) to run the matrix against; both (the default): wirebroker and Apache "
                             "Kafka, each as one broker and as a three-broker cluster (the failover column)")
    parser.add_argument("--clients", type=_names, default=None,
                        help=f"comma-separated subset of: {', '.join([*CLIENTS, SUITE_NAME])}")
    parser.add_argument("--scenarios", type=_names, default=None,
                        help=f"comma-separated subset of: {', '.join(SCENARIOS)}")
    parser.add_argument("--fast", action="store_true",
                        help="leave out the heavy parts: Spark and kafka-python's own integration tests")
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS,
                        help=f"driver processes run at once (default {DEFAULT_WORKERS})")
    parser.add_argument("--cache-dir", default=str(DEFAULT_CACHE_DIR), help="where installs are cached")
    return parser.parse_args(argv)


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    unknown = [s for s in args.scenarios or [] if s not in SCENARIOS]
    if unknown:
        print(f"unknown scenarios {unknown}; known: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    brokers = BROKER_KEYS if args.broker == "both" else (args.broker,)
    result = run_matrix(brokers, args.clients, args.scenarios, fast=args.fast, workers=args.workers,
                        cache_dir=Path(args.cache_dir))
    for path in report.write_all(result):
        print(f"wrote {path}")
    for line in report.summary_lines(result):
        print(line)
    all_green = all(c.ok for c in result.cells) and all(s.ok for s in result.suites)
    return 0 if all_green else 1


if __name__ == "__main__":
    sys.exit(main())
