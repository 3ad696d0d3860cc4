"""Install what each client's driver needs, from the package registries only, cached under .cache/compat/.

One function per toolchain; each is idempotent and cheap when its stamp is fresh (see cache.py):
  python_env()      venv with the Python clients (requirements.txt)      -> its python
  spark_env()       pyspark in that venv + the connector jars            -> (python, jars dir)
  java_driver(v)    kafka-clients <v> jars + CompatDriver compiled        -> java command prefix
  tool_host()       Kafka's tools jars + ToolHost compiled (many tool runs in one JVM) -> java command prefix
  go_drivers()      franz-go and sarama drivers built from go.mod/go.sum  -> {name: binary}
  node_modules()    kafkajs and its codecs from package-lock.json         -> node_modules dir
  kcat()            Debian's kcat (apt-get install when missing and root)  -> kcat binary
"""
from __future__ import annotations

import functools
import os
import shutil
import sys
import threading
from pathlib import Path
from typing import Callable, TypeVar

from compat_tests.cache import (DEFAULT_CACHE_DIR, PACKAGE_DIR, InstallError, inputs_digest, is_fresh,
                                mark_fresh, run_install_step)
from compat_tests import reference_kafka
from compat_tests.maven import classpath, fetch_jars

DRIVERS_DIR = PACKAGE_DIR / "drivers"
REQUIREMENTS = PACKAGE_DIR / "requirements.txt"
SPARK_REQUIREMENTS = PACKAGE_DIR / "requirements-spark.txt"
JAVA_CLIENT_VERSIONS = {"3.9": "clients-3.9", "4": "clients-4"}
GO_DRIVERS = ("franz", "sarama")
# Java drivers are short-lived: C1 only and a small heap start faster on 2 cores.
DRIVER_JVM_OPTS = ("-Xmx512M", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


Installer = TypeVar("Installer", bound=Callable)


def one_at_a_time(install: Installer) -> Installer:
    """Clients are installed in parallel and some share an install (two Go drivers, one venv): serialize each."""
    lock = threading.Lock()

    @functools.wraps(install)
    def serialized(*args, **kwargs):
        with lock:
            return install(*args, **kwargs)
    return serialized  # type: ignore[return-value]


def venv_python(cache_dir: Path = DEFAULT_CACHE_DIR) -> Path:
    return cache_dir / "venv" / "bin" / "python"


@one_at_a_time
def python_env(cache_dir: Path = DEFAULT_CACHE_DIR) -> Path:
    """A venv holding the pinned Python clients and pytest tools; returns its interpreter."""
    venv = cache_dir / "venv"
    digest = inputs_digest([REQUIREMENTS], extra=sys.version)
    if not is_fresh(venv, digest):
        if not venv_python(cache_dir).exists():
            run_install_step([sys.executable, "-m", "venv", venv])
        _pip_install(cache_dir, REQUIREMENTS)
        mark_fresh(venv, digest)
    return venv_python(cache_dir)


def _pip_install(cache_dir: Path, requirements: Path) -> None:
    run_install_step([venv_python(cache_dir), "-m", "pip", "install", "-q", "-r", requirements],
                     env={"PIP_CACHE_DIR": str(cache_dir / "pip")}, hint="install python3-venv and pip")


@one_at_a_time
def spark_env(cache_dir: Path = DEFAULT_CACHE_DIR) -> tuple[Path, Path]:
    """pyspark in the venv (its ~456 MB sdist builds once into pip's cache) and the Kafka connector jars."""
    python = python_env(cache_dir)
    venv = cache_dir / "venv"
    digest = inputs_digest([SPARK_REQUIREMENTS])
    if not is_fresh(venv, digest, ".stamp-spark"):
        _pip_install(cache_dir, SPARK_REQUIREMENTS)
        mark_fresh(venv, digest, ".stamp-spark")
    return python, fetch_jars("spark", cache_dir)


@one_at_a_time
def java_driver(version: str, cache_dir: Path = DEFAULT_CACHE_DIR) -> list[str]:
    """Compile drivers/java/CompatDriver.java against kafka-clients <version>; return the java command prefix."""
    name = JAVA_CLIENT_VERSIONS[version]
    jars = fetch_jars(name, cache_dir)
    return _compiled_java("CompatDriver", jars, cache_dir / "java" / name)


@one_at_a_time
def tool_host(cache_dir: Path = DEFAULT_CACHE_DIR) -> list[str]:
    """Compile drivers/java/ToolHost.java against the reference Kafka jars; return the java command prefix."""
    jars = reference_kafka.install_jars(cache_dir)
    return _compiled_java("ToolHost", jars, cache_dir / "java" / "tool-host",
                          [f"-Dlog4j2.configurationFile={jars / 'tools-log4j2.properties'}"])


def _compiled_java(main_class: str, jars: Path, classes: Path, jvm_opts: list[str] | None = None) -> list[str]:
    compile_java(DRIVERS_DIR / "java" / f"{main_class}.java", jars, classes)
    return ["java", *DRIVER_JVM_OPTS, *(jvm_opts or []), "-cp", f"{classes}{os.pathsep}{classpath(jars)}",
            main_class]


def compile_java(source: Path, jars: Path, classes: Path) -> Path:
    """javac one source file against a jars folder into `classes`, again only when either changed; `classes`."""
    digest = inputs_digest([source, jars / ".stamp"])
    if not is_fresh(classes, digest):
        if classes.exists():
            shutil.rmtree(classes)
        classes.mkdir(parents=True)
        run_install_step(["javac", "-nowarn", "-d", classes, "-cp", classpath(jars), source],
                         hint="install a JDK 17 (apt-get install openjdk-17-jdk-headless)")
        mark_fresh(classes, digest)
    return classes


def go_environment(cache_dir: Path = DEFAULT_CACHE_DIR) -> dict[str, str]:
    # -modcacherw keeps the module cache deletable with rm -rf.
    return {"GOMODCACHE": str(cache_dir / "go" / "mod"), "GOCACHE": str(cache_dir / "go" / "build"),
            "GOFLAGS": "-modcacherw -mod=readonly -buildvcs=false", "CGO_ENABLED": "0"}


@one_at_a_time
def go_drivers(cache_dir: Path = DEFAULT_CACHE_DIR) -> dict[str, Path]:
    """Build the franz-go and sarama drivers from the committed go.mod/go.sum; return {name: binary}."""
    go_dir = DRIVERS_DIR / "go"
    bin_dir = cache_dir / "go" / "bin"
    sources = [p for p in go_dir.rglob("*") if p.is_file()]
    digest = inputs_digest(sources, extra=str(sorted(str(p.relative_to(go_dir)) for p in sources)))
    if not is_fresh(bin_dir, digest):
        bin_dir.mkdir(parents=True, exist_ok=True)
        for name in GO_DRIVERS:
            run_install_step(["go", "build", "-o", bin_dir / name, f"./{name}"], cwd=go_dir,
                             env=go_environment(cache_dir), hint="install Go 1.22+ (https://go.dev/dl or apt)")
        mark_fresh(bin_dir, digest)
    return {name: bin_dir / name for name in GO_DRIVERS}


@one_at_a_time
def node_modules(cache_dir: Path = DEFAULT_CACHE_DIR) -> Path:
    """`npm ci` of the committed package-lock.json in a cache folder; returns its node_modules (for NODE_PATH)."""
    node_dir = cache_dir / "node"
    inputs = [DRIVERS_DIR / "node" / "package.json", DRIVERS_DIR / "node" / "package-lock.json"]
    digest = inputs_digest(inputs)
    if not is_fresh(node_dir, digest):
        node_dir.mkdir(parents=True, exist_ok=True)
        for path in inputs:
            shutil.copy(path, node_dir / path.name)
        run_install_step(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=node_dir,
                         env={"npm_config_cache": str(cache_dir / "npm-cache")},
                         hint="install Node.js 18+ and npm (apt-get install nodejs npm)")
        mark_fresh(node_dir, digest)
    return node_dir / "node_modules"


@one_at_a_time
def kcat() -> Path:
    """Debian's kcat; installed with apt-get when missing and we are root."""
    found = shutil.which("kcat")
    if found:
        return Path(found)
    if os.geteuid() != 0:
        raise InstallError("kcat is not installed and we are not root: run `sudo apt-get install kcat`")
    run_install_step(["apt-get", "update", "-q"], env={"DEBIAN_FRONTEND": "noninteractive"})
    run_install_step(["apt-get", "install", "-y", "-q", "kcat"], env={"DEBIAN_FRONTEND": "noninteractive"})
    found = shutil.which("kcat")
    if not found:
        raise InstallError("apt-get installed kcat but it is not on PATH")
    return Path(found)
