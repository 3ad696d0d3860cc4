"""The docker-compose cluster as local processes: `python -m wirebroker.devcluster [--file F] [--data DIR]`.

For machines without a Docker engine. Every service of docker-compose.yml that builds this repository runs as
`python -m wirebroker` with the service's own command, translated from the container to the host:
- a named volume mounted at a container path becomes DIR/<volume> (container paths in the arguments are rewritten),
- a published port "HOST:CONTAINER" makes the service listen on 127.0.0.1:HOST (or on a port given with
  --port HOST=LOCAL, so tests can avoid ports already in use), and advertise that address.
Ctrl-C or SIGTERM stops every service.
"""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

_LISTENER = re.compile(r"^(?P<key>(?:advertised\.)?listeners)=(?P<name>\w+)://[^:]*:(?P<port>\d+)$")


@dataclass
class Service:
    name: str
    args: list[str]


def services_from_compose(compose: dict, data_dir: Path, port_map: dict[int, int]) -> list[Service]:
    """The services that build this repository, with their commands translated to local processes."""
    services = []
    for name, spec in compose.get("services", {}).items():
        if "build" not in spec:
            continue
        mounts = {}
        for volume in spec.get("volumes", []):
            source, _, target = volume.partition(":")
            mounts[target] = str(data_dir / source)
        published = {}
        for port in spec.get("ports", []):
            host, _, container = str(port).partition(":")
            published[int(container)] = port_map.get(int(host), int(host))
        args = [_translate(arg, mounts, published) for arg in _as_list(spec.get("command", []))]
        services.append(Service(name, args))
    return services


def _as_list(command: str | list[str]) -> list[str]:
    return command.split() if isinstance(command, str) else list(command)


def _translate(arg: str, mounts: dict[str, str], published: dict[int, int]) -> str:
    for container_path, local_path in mounts.items():
        arg = arg.replace(container_path, local_path)
    match = _LISTENER.match(arg)
    if match:
        port = published.get(int(match["port"]), int(match["port"]))
        host = "127.0.0.1" if match["key"] == "listeners" else "localhost"
        return f"{match['key']}={match['name']}://{host}:{port}"
    return arg


def start(services: list[Service]) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-m", "wirebroker", *service.args]) for service in services]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wirebroker.devcluster", description=__doc__)
    parser.add_argument("--file", type=Path, default=Path("docker-compose.yml"))
    parser.add_argument("--data", type=Path, default=Path("devcluster-data"))
    parser.add_argument("--port", action="append", default=[], metavar="HOST=LOCAL",
                        help="listen on LOCAL where the compose file publishes HOST")
    args = parser.parse_args(argv)
    port_map = {int(h): int(local) for h, _, local in (p.partition("=") for p in args.port)}
    services = services_from_compose(yaml.safe_load(args.file.read_text()), args.data.resolve(), port_map)
    if not services:
        print(f"{args.file}: no service builds this repository", file=sys.stderr)
        return 1
    processes = start(services)
    signal.signal(signal.SIGTERM, lambda *_: [p.terminate() for p in processes])
    try:
        return max(p.wait() for p in processes)
    except KeyboardInterrupt:
        for p in processes:
            p.terminate()
        return max(p.wait() for p in processes)


if __name__ == "__main__":
    sys.exit(main())
