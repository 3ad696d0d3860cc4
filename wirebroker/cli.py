"""`wirebroker [server.properties] [--config FILE] [--override key=value ...] [--emulate 3.6]`: run a broker.

With no arguments: a broker on localhost:9092 (127.0.0.1 and ::1), data in ./wirebroker-data, topics created on
first use. SIGTERM or SIGINT stop it cleanly (logs flushed, checkpoints written). A bad configuration exits with
status 2 and a message naming the key.
"""

from __future__ import annotations

import argparse
import gc
import logging
import signal
import sys
import threading
import time
from pathlib import Path

from wirebroker import __version__
from wirebroker.config import EMULATE_KEY, EMULATED_KAFKA_VERSIONS, BrokerConfig, ConfigError

log = logging.getLogger("wirebroker")

EXIT_BAD_CONFIG = 2
EXIT_CANNOT_START = 1
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
# CPython collects its youngest generation every 700 net allocations, ~20 times a second under a 1,000 records/s
# produce-and-consume load, and promotes what waits in queues and purgatories to the older generations, whose
# collections then took 2-39 ms with the GIL held. Every 20,000: p99 produce-to-consume 6.2-7.8 ms against 10.2-13.5
# ms, p99.9 13-21 against 25-33 ms, a third of the collector's time (bench/ANALYSIS.md, section 3).
GC_YOUNGEST_THRESHOLD = 20_000


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="wirebroker", description="A broker that speaks Kafka's wire protocol.")
    parser.add_argument("properties", nargs="?", type=Path, help="a Kafka-style server.properties file")
    parser.add_argument("--config", type=Path, help="a Kafka-style server.properties file")
    parser.add_argument("--override", "-o", action="append", default=[], metavar="KEY=VALUE",
                        help="set one configuration key (Kafka's names), after the file; repeatable")
    parser.add_argument("--emulate", choices=EMULATED_KAFKA_VERSIONS, metavar="KAFKA_VERSION",
                        help=f"advertise and serve only the API versions that this Apache Kafka release advertises "
                             f"({', '.join(EMULATED_KAFKA_VERSIONS)}); the same as -o {EMULATE_KEY}=VERSION")
    parser.add_argument("--log-level", action="append", default=[], type=log_level, metavar="[LOGGER=]LEVEL",
                        help="INFO (the default), DEBUG, WARNING or ERROR; LOGGER=LEVEL sets one logger's, e.g. "
                             "wirebroker.request=DEBUG logs every request answered; repeatable")
    parser.add_argument("--version", action="version", version=f"wirebroker {__version__}")
    args = parser.parse_args(argv)
    if args.properties and args.config:
        parser.error("give the properties file once: positionally or with --config")
    args.config = args.config or args.properties
    if args.emulate:
        args.override.append(f"{EMULATE_KEY}={args.emulate}")
    return args


def log_level(text: str) -> tuple[str, str]:
    """`LEVEL` (the root logger's) or `LOGGER=LEVEL`, as (logger name, level); "" names the root logger."""
    name, _, level = text.rpartition("=")
    if level.upper() not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"{level!r} is not a level: use one of {', '.join(LOG_LEVELS)}")
    return name, level.upper()


def configure_logging(levels: list[tuple[str, str]]) -> None:
    root_levels = [level for name, level in levels if not name]
    logging.basicConfig(level=root_levels[-1] if root_levels else "INFO",
                        format="[%(asctime)s] %(levelname)s %(name)s: %(message)s")
    for name, level in levels:
        if name:
            logging.getLogger(name).setLevel(level)


def main(argv: list[str] | None = None) -> int:
    started = time.monotonic()
    args = parse_args(argv)
    configure_logging(args.log_level)
    try:
        config = BrokerConfig.load(args.config, args.override)
    except (ConfigError, OSError) as exc:
        print(f"wirebroker: configuration error: {exc}", file=sys.stderr)
        return EXIT_BAD_CONFIG
    from wirebroker.server.broker import Broker  # after the config is known good: imports cost start-up time

    tune_garbage_collector()
    broker = Broker(config)
    # Installed before the listeners open: a signal during start-up waits for it, then shuts down cleanly.
    stop_requested = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop_requested.set())
    try:
        broker.start()
    except OSError as exc:
        print(f"wirebroker: cannot start: {exc}", file=sys.stderr)
        broker.shutdown()
        return EXIT_CANNOT_START
    listeners = ", ".join(listener.url() for listener in broker.bound_listeners())
    data_dirs = ", ".join(str(d.resolve()) for d in config.log_dirs)
    print(f"wirebroker {__version__} (node {broker.node_id}, cluster {broker.cluster_id}) listening on {listeners}; "
          f"data in {data_dirs}; ready in {(time.monotonic() - started) * 1000:.0f} ms", flush=True)
    from wirebroker.server.startup_report import startup_lines  # the details, after the line that says ready

    print("".join(f"  {line}\n" for line in startup_lines(broker)), end="", flush=True)
    stop_requested.wait()
    broker.shutdown()
    return 0


def tune_garbage_collector() -> None:
    """Collect the youngest generation less often in a process that is a broker (not in one that embeds it)."""
    gc.set_threshold(GC_YOUNGEST_THRESHOLD, *gc.get_threshold()[1:])


if __name__ == "__main__":
    sys.exit(main())
