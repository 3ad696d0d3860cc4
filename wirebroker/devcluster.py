"""The docker-compose cluster as local processes: `python -m wirebroker.devcluster [--file F] [--data DIR]`.

For machines without a Docker engine. The compose file's ZooKeeper service runs as a local ZooKeeper from Debian's
package (`make tools` installs it) with its data in DIR/<its volume>, on a free port (or --zookeeper-port); every
service that builds this repository runs as `python -m wirebroker` with the service's own command, its addresses and
volumes translated to this machine (devcluster_compose.py says how). ZooKeeper is serving before the first broker
starts. Ctrl-C or SIGTERM stops the brokers first (SIGTERM: a clean, controlled shutdown), then ZooKeeper.
"""

from __future__ import annotations

import argparse
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

from wirebroker.cluster.zookeeper_server import ZooKeeperServer
from wirebroker.devcluster_compose import BrokerService, LocalCluster, local_cluster
from wirebroker.network.ports import free_port

BROKER_START_TIMEOUT_S = 60.0
BROKER_STOP_TIMEOUT_S = 60.0  # a controlled shutdown waits for the controller to move leadership away


class DevCluster:
    """ZooKeeper and the brokers of one compose file, as processes of this machine."""

    def __init__(self, plan: LocalCluster) -> None:
        self.plan = plan
        self.zookeeper: ZooKeeperServer | None = None
        self.brokers: dict[str, subprocess.Popen] = {}

    def start_zookeeper(self) -> None:
        service = self.plan.zookeeper
        if service is None:
            return
        # ZooKeeper ignores the terminal's Ctrl-C (SIG_IGN is inherited, and the JVM leaves an ignored SIGINT
        # alone): it must outlive the brokers, whose controlled shutdown goes through it.
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            self.zookeeper = ZooKeeperServer(port=service.port, data_dir=service.data_dir).start()
        finally:
            signal.signal(signal.SIGINT, previous)
        print(f"devcluster: {service.name}: ZooKeeper serving on {self.zookeeper.connect_string} "
              f"(data in {service.data_dir})", flush=True)

    def start_brokers(self) -> None:
        for broker in self.plan.brokers:
            # A session of its own: the terminal's Ctrl-C reaches this process only, which stops brokers in order.
            self.brokers[broker.name] = subprocess.Popen([sys.executable, "-m", "wirebroker", *broker.args],
                                                         start_new_session=True)

    def wait_until_listening(self, timeout: float = BROKER_START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        for broker in self.plan.brokers:
            while not _listening(broker):
                process = self.brokers[broker.name]
                if process.poll() is not None:
                    raise RuntimeError(f"{broker.name} exited with status {process.returncode}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{broker.name} did not listen on 127.0.0.1:{broker.listen_ports[0]} "
                                       f"within {timeout:.0f}s")
                time.sleep(0.1)
        ports = ", ".join(f"{b.name} 127.0.0.1:{b.listen_ports[-1]}" for b in self.plan.brokers if b.listen_ports)
        print(f"devcluster: {len(self.brokers)} broker(s) up: {ports}; Ctrl-C stops the cluster", flush=True)

    def running(self) -> bool:
        return any(process.poll() is None for process in self.brokers.values())

    def stop(self) -> int:
        """SIGTERM to every broker, wait (SIGKILL past the timeout), then stop ZooKeeper; the worst exit status."""
        for process in self.brokers.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        status = 0
        deadline = time.monotonic() + BROKER_STOP_TIMEOUT_S
        for name, process in self.brokers.items():
            try:
                status = max(status, process.wait(max(0.0, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                print(f"devcluster: {name} did not stop within {BROKER_STOP_TIMEOUT_S:.0f}s; killing it",
                      file=sys.stderr, flush=True)
                process.kill()
                process.wait()
                status = max(status, 1)
        if self.zookeeper is not None:
            self.zookeeper.stop()
        return status


def _listening(broker: BrokerService) -> bool:
    if not broker.listen_ports:
        return True
    try:
        socket.create_connection(("127.0.0.1", broker.listen_ports[0]), timeout=0.5).close()
        return True
    except OSError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wirebroker.devcluster", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, default=Path("docker-compose.yml"))
    parser.add_argument("--data", type=Path, default=Path("devcluster-data"))
    parser.add_argument("--port", action="append", default=[], metavar="HOST=LOCAL",
                        help="listen on LOCAL where the compose file publishes HOST (repeatable)")
    parser.add_argument("--zookeeper-port", type=int, default=None, help="ZooKeeper's port (default: a free one)")
    args = parser.parse_args(argv)
    port_map = {int(host): int(local) for host, _, local in (p.partition("=") for p in args.port)}
    plan = local_cluster(yaml.safe_load(args.file.read_text()), args.data.resolve(), port_map, free_port,
                         args.zookeeper_port)
    if not plan.brokers:
        print(f"{args.file}: no service builds this repository", file=sys.stderr)
        return 1
    for name in plan.not_run:
        print(f"devcluster: {name}: not run (neither ZooKeeper nor built from this repository)", file=sys.stderr)
    stop_requested = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop_requested.set())
    cluster = DevCluster(plan)
    try:
        cluster.start_zookeeper()
        cluster.start_brokers()
        cluster.wait_until_listening()
        while cluster.running() and not stop_requested.wait(0.5):
            pass
    except RuntimeError as exc:
        print(f"devcluster: {exc}", file=sys.stderr, flush=True)
        cluster.stop()
        return 1
    return cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
