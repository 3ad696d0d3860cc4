"""`python -m compat_tests.kafka_releases`: ask each emulated Apache Kafka release what it advertises, and store it.

For every release in RELEASES: fetch `org.apache.kafka:kafka_2.13:<version>` and its runtime dependencies from Maven
Central (cached under .cache/compat/), format a fresh single-node KRaft broker+controller as that release's
quickstart does (`--standalone` from 3.9 on, KIP-853; a static voter before), start it with default settings, send
ApiVersions on its PLAINTEXT (broker) listener, at the highest version it serves (v4 hides no supported feature:
below v4 Kafka leaves out those whose min version is 0, KAFKA-17011), until two answers a second apart agree, stop
it, and write
wirebroker/apis/releases/kafka-<line>.json: the API keys with their ranges, the supported features and the finalized
feature levels. `wirebroker --emulate <line>` (apis/emulation.py) reads these files; nothing is computed from the
release's schemas, so what is stored is what the real broker answered. `--check` compares the answers with the
stored files instead of writing them.

Takes about a minute per release on 2 cores (the first run also fetches ~45 MB of jars per release).
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

from compat_tests.brokers import BrokerProcess, free_port
from compat_tests.cache import (
    DEFAULT_CACHE_DIR,
    inputs_digest,
    is_fresh,
    mark_fresh,
    run_install_step,
)
from compat_tests.reference_kafka import ReferenceKafka
from wirebroker.network.broker_client import BrokerClient
from wirebroker.protocol.messages import API_SPECS
from wirebroker.protocol.messages.api_versions import (
    ApiVersionsRequest,
    ApiVersionsResponse,
)

log = logging.getLogger(__name__)

RELEASES_DIR = Path(__file__).resolve().parent.parent / "wirebroker" / "apis" / "releases"
# The newest patch release of each line that Maven Central serves (kafka_2.13).
RELEASES = ("3.6.2", "3.9.2", "4.0.2", "4.1.2", "4.2.2", "4.3.1")
# KIP-853 (3.9): `StorageTool format --standalone` and controller.quorum.bootstrap.servers; before, static voters.
FIRST_STANDALONE = (3, 9)
API_VERSIONS_KEY = 18
FIRST_ASKED_VERSION = 3  # every release here answers v3 (KIP-511: features and client software fields)
STABLE_AFTER_S = 1.0
STABLE_TIMEOUT_S = 60.0

POM = """\
<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by compat_tests/kafka_releases.py: Apache Kafka {version}'s broker, never built. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>wirebroker.releases</groupId>
  <artifactId>kafka-release</artifactId>
  <version>{version}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>{version}</version></dependency>
  </dependencies>
</project>
"""


def release_line(version: str) -> str:
    """"3.6.2" -> "3.6": the name `--emulate` takes."""
    return ".".join(version.split(".")[:2])


def fetch_broker_jars(version: str, cache_dir: Path = DEFAULT_CACHE_DIR) -> Path:
    """kafka_2.13:<version> and its runtime dependencies from Maven Central, copied into one cached folder."""
    out_dir = cache_dir / "jars" / f"kafka-release-{version}"
    pom_text = POM.format(version=version)
    digest = inputs_digest([], pom_text)
    if is_fresh(out_dir, digest):
        return out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    pom = out_dir / "pom.xml"
    pom.write_text(pom_text)
    run_install_step(["mvn", "-B", "-q", f"-Dmaven.repo.local={cache_dir / 'm2'}", "-f", pom,
                      "dependency:copy-dependencies", f"-DoutputDirectory={out_dir}", "-DincludeScope=runtime"],
                     hint="install Maven (apt-get install maven) and a JDK 17")
    mark_fresh(out_dir, digest)
    return out_dir


def start_release(version: str, jars_dir: Path, work_dir: Path) -> BrokerProcess:
    """A single-node KRaft broker+controller of `version`, formatted as its quickstart does, started."""
    controller_port = free_port()
    standalone = tuple(map(int, version.split(".")[:2])) >= FIRST_STANDALONE
    broker = ReferenceKafka(work_dir, jars_dir, node_id=1, controller_port=controller_port,
                            voters=None if standalone else f"1@127.0.0.1:{controller_port}")
    broker.name = f"Apache Kafka {version}"
    return broker.start()


def ask_api_versions(port: int, version: int) -> ApiVersionsResponse:
    client = BrokerClient("127.0.0.1", port, client_id="wirebroker-release-census", timeout_s=10)
    try:
        return client.send(ApiVersionsRequest(client_software_name="wirebroker-release-census",
                                              client_software_version="1"), version)
    finally:
        client.close()


def highest_api_versions_version(port: int) -> int:
    """The highest ApiVersions version both the release and our codec speak."""
    answer = ask_api_versions(port, FIRST_ASKED_VERSION)
    served = next(k.max_version for k in answer.api_keys if k.api_key == API_VERSIONS_KEY)
    return min(served, ApiVersionsRequest.MAX_VERSION)


def stable_answer(port: int, version: int) -> dict:
    """The broker's ApiVersions answer once it stops changing (the broker learns its controller's versions and
    the finalized features after its listener opens)."""
    deadline = time.monotonic() + STABLE_TIMEOUT_S
    previous = None
    while time.monotonic() < deadline:
        answer = as_table(ask_api_versions(port, version))
        if answer == previous and answer["finalized_features"]:
            return answer
        previous = answer
        time.sleep(STABLE_AFTER_S)
    raise RuntimeError(f"the broker on port {port} did not give the same ApiVersions answer twice in "
                       f"{STABLE_TIMEOUT_S:.0f}s")


def as_table(response: ApiVersionsResponse) -> dict:
    if response.error_code:
        raise RuntimeError(f"ApiVersions answered error {response.error_code}")
    return {
        "api_keys": [{"api_key": k.api_key, "name": API_SPECS[k.api_key].name if k.api_key in API_SPECS else None,
                      "min_version": k.min_version, "max_version": k.max_version}
                     for k in sorted(response.api_keys, key=lambda k: k.api_key)],
        "supported_features": [{"name": f.name, "min_version": f.min_version, "max_version": f.max_version}
                               for f in sorted(response.supported_features, key=lambda f: f.name)],
        "finalized_features": [{"name": f.name, "min_version_level": f.min_version_level,
                                "max_version_level": f.max_version_level}
                               for f in sorted(response.finalized_features, key=lambda f: f.name)],
    }


def gather(version: str, work_root: Path) -> dict:
    jars_dir = fetch_broker_jars(version)
    broker = start_release(version, jars_dir, work_root / version)
    try:
        asked = highest_api_versions_version(broker.port)
        answer = stable_answer(broker.port, asked)
    finally:
        broker.stop()
    return {
        "kafka_version": version,
        "artifact": f"org.apache.kafka:kafka_2.13:{version}",
        "how": f"ApiVersions v{asked} on the PLAINTEXT listener of a single-node KRaft broker+controller "
               "with default settings, freshly formatted; written by python -m compat_tests.kafka_releases",
        **answer,
    }


def release_path(version: str) -> Path:
    return RELEASES_DIR / f"kafka-{release_line(version)}.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compat_tests.kafka_releases", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("versions", nargs="*", default=list(RELEASES), help=f"releases to ask (default: {RELEASES})")
    parser.add_argument("--check", action="store_true", help="compare with the stored files; write nothing")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    differing = []
    with tempfile.TemporaryDirectory(prefix="kafka-releases-") as work_root:
        for version in args.versions:
            table = gather(version, Path(work_root))
            path = release_path(version)
            if args.check:
                stored = json.loads(path.read_text())
                if {k: v for k, v in stored.items() if k != "how"} != {k: v for k, v in table.items() if k != "how"}:
                    differing.append(version)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(table, indent=1) + "\n")
            print(f"Apache Kafka {version}: {len(table['api_keys'])} API keys, "
                  f"{len(table['finalized_features'])} finalized features -> {path}")
    if differing:
        print(f"differ from the stored tables: {', '.join(differing)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
