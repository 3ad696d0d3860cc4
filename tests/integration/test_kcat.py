"""kcat (librdkafka 2.0.2 from Debian): metadata (-L), produce (-P) and consume (-C) against the broker."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

KCAT = shutil.which("kcat")


@pytest.fixture
def kcat():
    if KCAT is None:
        pytest.fail("kcat is missing: install it with `apt-get install kcat` (make test does this as root)")
    return KCAT


def run(*args: str, input: str | None = None) -> str:
    result = subprocess.run(args, input=input, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_kcat_produce_list_consume(kcat, broker):
    lines = [f"key{i}:value {i}" for i in range(1000)]
    run(kcat, "-b", broker.bootstrap, "-P", "-t", "kcat-topic", "-K", ":", "-z", "snappy", input="\n".join(lines))
    metadata = json.loads(run(kcat, "-b", broker.bootstrap, "-L", "-J", "-t", "kcat-topic"))
    assert metadata["brokers"][0]["name"].endswith(str(broker.port))
    assert [t["topic"] for t in metadata["topics"]] == ["kcat-topic"]
    consumed = run(kcat, "-b", broker.bootstrap, "-C", "-t", "kcat-topic", "-o", "beginning", "-e", "-K", ":",
                   "-f", "%k:%s:%o\n")
    assert consumed.splitlines() == [f"{line}:{i}" for i, line in enumerate(lines)]
