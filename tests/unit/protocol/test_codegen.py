"""The committed generated code is what the generator makes from schemas/, and schemas/ is upstream minus prose."""

import json
from pathlib import Path

from wirebroker.protocol.codegen.__main__ import main as codegen_main
from wirebroker.protocol.codegen.sync import sync

ROOT = Path(__file__).resolve().parents[3]
UPSTREAM = ROOT.parent / "shared" / "kafka-message-schemas"


def test_generated_modules_are_current(capsys):
    assert codegen_main(["--check"]) == 0, capsys.readouterr().err


def test_schemas_carry_no_upstream_prose():
    for path in (ROOT / "schemas").glob("*/*.json"):
        text = path.read_text()
        assert '"about"' not in text and "//" not in text and "Licensed" not in text, path


def test_sync_reproduces_the_committed_schemas(tmp_path):
    source = json.loads((ROOT / "schemas" / "SOURCE.json").read_text())
    assert UPSTREAM.is_dir(), f"the upstream schemas are expected at {UPSTREAM}"
    sync(UPSTREAM, source["version"], tmp_path)
    for path in tmp_path.rglob("*.json"):
        assert path.read_text() == (ROOT / "schemas" / path.relative_to(tmp_path)).read_text(), path


def test_manifest_never_advertises_an_unstable_version():
    manifest = {e["name"]: e for e in json.loads((ROOT / "schemas" / "manifest.json").read_text())}
    assert manifest["EndTxn"]["max_version"] == 4  # schema 0-5, v5 marked latestVersionUnstable
    assert manifest["Produce"]["min_version"] == 0 and manifest["Fetch"]["min_version"] == 0
    assert manifest["CreateTopics"]["min_version"] == 2  # Kafka 4 removed v0-1 (KIP-896)
    assert "LeaderAndIsr" not in manifest  # controller-to-broker only
