"""The Kafka jars the schemas come from: pinned in schemas/jars.json, fetched with Maven, checked by sha256.

Kafka ships its JSON message specs inside its Maven artifacts (`common/message/*.json` in kafka-clients and the
coordinator jars, `message/*.json` in kafka-storage). Each pinned artifact names its Maven coordinates, the folder
of specs inside the jar, the folder under schemas/ they go to, and the sha256 of the jar; a jar whose digest differs
is deleted and refused. Jars are copied by `mvn dependency:copy` (Maven Central, Maven's own repository kept under
the cache folder) into `.cache/kafka-jars/`, and fetched only when missing there.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PINS = ROOT / "schemas" / "jars.json"
DEFAULT_CACHE = ROOT / ".cache" / "kafka-jars"
# Pinned so that the copy goal and its `artifact` parameter behave the same whatever Maven's default plugin is.
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
MVN_TIMEOUT_S = 600


class JarError(RuntimeError):
    """A pinned jar could not be fetched or is not the pinned one."""


@dataclass(frozen=True)
class Artifact:
    coordinates: str  # group:artifact:version
    entries: str  # folder of JSON specs inside the jar
    dir: str  # folder under schemas/
    sha256: str

    @property
    def file_name(self) -> str:
        _, artifact, version = self.coordinates.split(":")
        return f"{artifact}-{version}.jar"


@dataclass(frozen=True)
class Pins:
    kafka_version: str
    artifacts: tuple[Artifact, ...]
    older_versions: Artifact  # the release whose older versions Kafka 4 removed but the broker still serves


def load_pins(path: Path = PINS) -> Pins:
    data = json.loads(path.read_text())
    return Pins(data["kafka_version"], tuple(Artifact(**a) for a in data["artifacts"]),
                Artifact(**data["older_versions"]))


def fetch(artifact: Artifact, cache: Path = DEFAULT_CACHE) -> Path:
    """The path of the pinned jar in `cache`, copied there by Maven first if it is missing."""
    jar = cache / artifact.file_name
    if not jar.exists():
        _mvn_copy(artifact, cache)
    digest = hashlib.sha256(jar.read_bytes()).hexdigest()
    if digest != artifact.sha256:
        jar.unlink()
        raise JarError(f"{artifact.coordinates}: sha256 {digest} is not the pinned {artifact.sha256}; the jar was "
                       "deleted (fetch it again, or update schemas/jars.json only for a new release)")
    return jar


def _mvn_copy(artifact: Artifact, cache: Path) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise JarError(f"fetching {artifact.coordinates} needs Maven: apt-get install maven (and a JDK 17)")
    cache.mkdir(parents=True, exist_ok=True)
    cmd = [mvn, "-B", "-q", f"-Dmaven.repo.local={cache / 'm2'}", f"{DEPENDENCY_PLUGIN}:copy",
           f"-Dartifact={artifact.coordinates}", f"-DoutputDirectory={cache}"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=MVN_TIMEOUT_S, check=False)
    if result.returncode != 0 or not (cache / artifact.file_name).exists():
        raise JarError(f"mvn could not copy {artifact.coordinates} (exit {result.returncode}):\n"
                       f"{result.stdout[-2000:]}{result.stderr[-2000:]}")


def read_specs(jar: Path, artifact: Artifact) -> dict[str, str]:
    """`<dir>/<Name>.json` -> the spec's text, for every JSON spec in the artifact's folder of the jar."""
    with zipfile.ZipFile(jar) as archive:
        return {
            f"{artifact.dir}/{name[len(artifact.entries):]}": archive.read(name).decode()
            for name in sorted(archive.namelist())
            if name.startswith(artifact.entries) and name.endswith(".json") and "/" not in name[len(artifact.entries):]
        }
