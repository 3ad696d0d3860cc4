"""`python -m bench`: the suite against wirebroker, then Apache Kafka 4.3.1, and the report.

    python -m bench [--broker wirebroker|kafka|both] [--quick] [--only PATTERN ...] [--out DIR]
                    [--wirebroker-override KEY=VALUE ...] [--kafka-override KEY=VALUE ...]

Writes <out>/<broker>.json per broker run, then <out>/chart.png and the report: bench/RESULTS.md for a full run
into the default folder, <out>/RESULTS.md otherwise. A broker not run this time is reported from its last JSON in
<out>, if there is one. Defaults: --out bench/results (bench/results/quick with --quick).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path

from bench import report
from bench.runner import BROKERS, parse_settings, raise_priority, run_suite
from bench.workloads import select, suite
from compat_tests.reference_kafka import install_jars

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_OUT = BENCH_DIR / "results"
QUICK_OUT = DEFAULT_OUT / "quick"
REPORT_PATH = BENCH_DIR / "RESULTS.md"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    raise_priority(args.nice)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    logging.getLogger("kafka").setLevel(logging.WARNING)  # kafka-python (topic creation) is chatty at INFO
    mode = "quick" if args.quick else "full"
    out = args.out or (QUICK_OUT if args.quick else DEFAULT_OUT)
    out.mkdir(parents=True, exist_ok=True)
    workloads = select(suite(mode), [p for spec in args.only for p in spec.split(",")])
    jars = install_jars()
    overrides = {"wirebroker": parse_settings(args.wirebroker_override), "kafka": parse_settings(args.kafka_override)}
    kinds = BROKERS if args.broker == "both" else (args.broker,)
    for kind in kinds:
        with tempfile.TemporaryDirectory(prefix=f"bench-{kind}-") as work_dir:
            result = run_suite(kind, workloads, Path(work_dir), jars, overrides[kind])
        result["mode"] = mode
        (out / f"{kind}.json").write_text(json.dumps(result, indent=2) + "\n")
    report_path = REPORT_PATH if out == DEFAULT_OUT else out / "RESULTS.md"
    report.write(out, report_path)
    print(f"wrote {report_path}")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--broker", choices=(*BROKERS, "both"), default="both")
    parser.add_argument("--quick", action="store_true", help="every workload with ~1/20 of the bytes")
    parser.add_argument("--only", action="append", default=[], metavar="PATTERN",
                        help="run only workloads whose name matches (shell pattern; repeat or comma-separate)")
    parser.add_argument("--nice", type=int, default=0,
                        help="run brokers and load at this niceness (e.g. -10 on a shared machine; needs root)")
    parser.add_argument("--out", type=Path, help="folder for the JSON results, chart and (non-default) report")
    parser.add_argument("--wirebroker-override", action="append", default=[], metavar="KEY=VALUE",
                        help="a broker setting for wirebroker, e.g. num.io.threads=0")
    parser.add_argument("--kafka-override", action="append", default=[], metavar="KEY=VALUE",
                        help="a server.properties setting for Apache Kafka")
    return parser


if __name__ == "__main__":
    sys.exit(main())
