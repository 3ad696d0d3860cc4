"""Where the matrix keeps what it installs, and how it knows an install is still good.

Everything fetched from a package registry lives under `<repo>/.cache/compat/` (git-ignored), one folder per kind:
  m2/          Maven's local repository (-Dmaven.repo.local)
  jars/<name>/ jars copied out of m2 for one pom (a classpath), with a stamp
  venv/        the Python clients and test tools, pinned by compat_tests/requirements*.txt
  pip/         pip's wheel cache (pyspark's sdist builds once)
  go/          GOMODCACHE, GOCACHE and the built driver binaries
  node/        node_modules from `npm ci` of the committed package-lock.json, and npm's cache
  java/        compiled Java driver classes, one folder per kafka-clients classpath
A stamp is a file `.stamp` in the output folder holding a digest of every input that made it; an install whose stamp
matches is skipped, so a second run of the matrix installs nothing.
"""
from __future__ import annotations

import hashlib
import logging
import os
import subprocess
from pathlib import Path
from typing import Iterable, Mapping, Sequence

log = logging.getLogger(__name__)

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_DIR = PACKAGE_DIR.parent
DEFAULT_CACHE_DIR = REPO_DIR / ".cache" / "compat"
STAMP_NAME = ".stamp"


class InstallError(RuntimeError):
    """An install step failed; the message says which command and what to install by hand to get past it."""


def inputs_digest(paths: Iterable[Path], extra: str = "") -> str:
    """A digest of the files (and an extra string, e.g. a version) that an install is made from."""
    digest = hashlib.sha256(extra.encode())
    for path in sorted(paths):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def is_fresh(out_dir: Path, digest: str, stamp_name: str = STAMP_NAME) -> bool:
    stamp = out_dir / stamp_name
    return stamp.is_file() and stamp.read_text() == digest


def mark_fresh(out_dir: Path, digest: str, stamp_name: str = STAMP_NAME) -> None:
    (out_dir / stamp_name).write_text(digest)


def run_install_step(cmd: Sequence[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None,
                     timeout: float = 1800, hint: str = "") -> None:
    """Run one install command; on failure raise InstallError with the command's own last words.

    hint: what to install when the command itself is missing.
    """
    log.info("installing: %s", " ".join(str(c) for c in cmd))
    full_env = {**os.environ, **(env or {})}
    try:
        proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=full_env, capture_output=True, text=True,
                              timeout=timeout)
    except FileNotFoundError as exc:
        raise InstallError(f"{cmd[0]} is not installed{': ' + hint if hint else ''}") from exc
    except subprocess.TimeoutExpired as exc:
        raise InstallError(f"install step timed out after {timeout:.0f}s: {' '.join(map(str, cmd))}") from exc
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr)[-3000:]
        raise InstallError(f"install step failed (exit {proc.returncode}): {' '.join(map(str, cmd))}\n{tail}")
