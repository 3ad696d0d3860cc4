"""Fetch the jars named by one of the committed poms under compat_tests/maven/ into the cache.

Each pom is of packaging `pom` and is never built: `mvn dependency:copy-dependencies` copies its runtime
dependencies (transitive unless the pom's folder holds a file EXCLUDE_TRANSITIVE) into `.cache/compat/jars/<name>/`,
which then is one classpath (`<dir>/*`). Maven's own repository is `.cache/compat/m2/`, so nothing lands in ~/.m2.
"""
from __future__ import annotations

import shutil
import threading
from pathlib import Path

from compat_tests.cache import (DEFAULT_CACHE_DIR, PACKAGE_DIR, inputs_digest, is_fresh, mark_fresh,
                                run_install_step)

POMS_DIR = PACKAGE_DIR / "maven"
EXCLUDE_TRANSITIVE_MARKER = "EXCLUDE_TRANSITIVE"
# Installs run in parallel and several need the same jars (the tools' jars: reference broker, CLI and verifiable
# drivers); one fetch at a time keeps them from copying into the same folder together.
_FETCH_LOCK = threading.RLock()


def fetch_jars(name: str, cache_dir: Path = DEFAULT_CACHE_DIR) -> Path:
    """Copy the dependencies of compat_tests/maven/<name>/pom.xml into a cached folder and return that folder."""
    with _FETCH_LOCK:
        return _fetch_jars(name, cache_dir)


def _fetch_jars(name: str, cache_dir: Path) -> Path:
    pom_dir = POMS_DIR / name
    out_dir = cache_dir / "jars" / name
    digest = inputs_digest(sorted(p for p in pom_dir.iterdir() if p.is_file()))
    if is_fresh(out_dir, digest):
        return out_dir
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    cmd = ["mvn", "-B", "-q", f"-Dmaven.repo.local={cache_dir / 'm2'}", "-f", str(pom_dir / "pom.xml"),
           "dependency:copy-dependencies", f"-DoutputDirectory={out_dir}", "-DincludeScope=runtime"]
    if (pom_dir / EXCLUDE_TRANSITIVE_MARKER).exists():
        cmd.append("-DexcludeTransitive=true")
    run_install_step(cmd, hint="install Maven (apt-get install maven) and a JDK 17")
    mark_fresh(out_dir, digest)
    return out_dir


def classpath(jars_dir: Path) -> str:
    """The java -cp value for every jar in a folder."""
    return str(jars_dir / "*")
