"""`python -m bench`: the suite against wirebroker, then Apache Kafka 4.3.1, and the report.

    python -m bench [--broker wirebroker|kafka|both] [--quick|--smoke] [--only PATTERN ...] [--rounds N] [--out DIR]
                    [--max-others SHARE] [--retries N] [--retry-wait S]
                    [--wirebroker-override KEY=VALUE ...] [--kafka-override KEY=VALUE ...]

Writes <out>/<broker>.json per broker run, then <out>/chart.png and the report: bench/RESULTS.md for a full run
into the default folder, <out>/RESULTS.md otherwise. A broker not run this time is reported from its last JSON in
<out>, if there is one, and a broker's workloads not run this time (--only) keep their last figures there. With
--rounds N the brokers take turns N times and each workload reports its median comparable round.
Quietness (bench/quietness.py): before and during every workload the suite reads /proc for the share of the cores
that processes other than its own (harness, broker, load tools) used; a run where they used more than --max-others
(default 0.10 of the cores) is refused and tried again after --retry-wait seconds, up to --retries more times, and
is otherwise kept as "not comparable": its figures are shown per round, never as a ratio.
Defaults: --out bench/results (bench/results/quick with --quick, bench/results/smoke with --smoke).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path

from bench import report
from bench.quietness import DEFAULT_MAX_OTHERS, Gate
from bench.runner import BROKERS, combine_rounds, is_comparable, parse_settings, raise_priority, run_suite
from bench.workloads import select, suite
from compat_tests.reference_kafka import install_jars

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_OUT = BENCH_DIR / "results"
QUICK_OUT = DEFAULT_OUT / "quick"
SMOKE_OUT = DEFAULT_OUT / "smoke"
REPORT_PATH = BENCH_DIR / "RESULTS.md"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    raise_priority(args.nice)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    logging.getLogger("kafka").setLevel(logging.WARNING)  # kafka-python (topic creation) is chatty at INFO
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    out = args.out or {"smoke": SMOKE_OUT, "quick": QUICK_OUT}.get(mode, DEFAULT_OUT)
    out.mkdir(parents=True, exist_ok=True)
    workloads = select(suite(mode), [p for spec in args.only for p in spec.split(",")])
    jars = install_jars()
    overrides = {"wirebroker": parse_settings(args.wirebroker_override), "kafka": parse_settings(args.kafka_override)}
    kinds = BROKERS if args.broker == "both" else (args.broker,)
    gate = Gate(max_others=args.max_others, retries=args.retries, wait_s=args.retry_wait)
    rounds: dict[str, list[dict]] = {kind: [] for kind in kinds}
    for _round in range(args.rounds):
        for kind in kinds:  # alternating, so that a change in the machine's load falls on both brokers
            with tempfile.TemporaryDirectory(prefix=f"bench-{kind}-") as work_dir:
                rounds[kind].append(run_suite(kind, workloads, Path(work_dir), jars, overrides[kind], gate))
    for kind, results in rounds.items():
        result = {**combine_rounds(results), "mode": mode}
        path = out / f"{kind}.json"
        path.write_text(json.dumps(merge_into(path, result), indent=2) + "\n")
    report_path = REPORT_PATH if out == DEFAULT_OUT else out / "RESULTS.md"
    report.write(out, report_path)
    print(f"wrote {report_path}")
    refused = [f"{kind} {name} round {i + 1}" for kind, results in rounds.items() for i, r in enumerate(results)
               for name, entry in r["workloads"].items() if not is_comparable(entry)]
    if refused:
        print(f"NOT COMPARABLE (the machine was busy, limit {gate.max_others:.0%} of the cores used by others): "
              + "; ".join(refused))
    return 0


def merge_into(path: Path, result: dict) -> dict:
    """The new result, keeping from the file's previous result (same mode) the workloads not run this time."""
    if not path.exists():
        return result
    previous = json.loads(path.read_text())
    if previous.get("mode") != result["mode"]:
        return result
    return {**previous, **result, "workloads": {**previous.get("workloads", {}), **result["workloads"]}}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--broker", choices=(*BROKERS, "both"), default="both")
    parser.add_argument("--quick", action="store_true", help="every workload with ~1/20 of the bytes")
    parser.add_argument("--smoke", action="store_true",
                        help="every workload with a few MB, to check it runs end to end (figures mean nothing)")
    parser.add_argument("--only", action="append", default=[], metavar="PATTERN",
                        help="run only workloads whose name matches (shell pattern; repeat or comma-separate)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run everything N times, brokers alternating, and report each workload's median round")
    parser.add_argument("--nice", type=int, default=0,
                        help="run brokers and load at this niceness (e.g. -10 on a shared machine; needs root)")
    parser.add_argument("--max-others", type=float, default=DEFAULT_MAX_OTHERS, metavar="SHARE",
                        help="the share of the cores (0-1) other processes may use before and during a run for it "
                             "to count (default %(default)s)")
    parser.add_argument("--retries", type=int, default=Gate.retries,
                        help="how many more times a busy run is tried before it is kept as not comparable")
    parser.add_argument("--retry-wait", type=float, default=Gate.wait_s, metavar="S",
                        help="seconds to wait before trying a busy run again")
    parser.add_argument("--out", type=Path, help="folder for the JSON results, chart and (non-default) report")
    parser.add_argument("--wirebroker-override", action="append", default=[], metavar="KEY=VALUE",
                        help="a broker setting for wirebroker, e.g. num.io.threads=0")
    parser.add_argument("--kafka-override", action="append", default=[], metavar="KEY=VALUE",
                        help="a server.properties setting for Apache Kafka")
    return parser


if __name__ == "__main__":
    sys.exit(main())
