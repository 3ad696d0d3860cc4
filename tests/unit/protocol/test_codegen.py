"""The committed generated code is what the generator makes from schemas/, and schemas/ is upstream minus prose.

The sync tool is checked on a small committed fixture in upstream's format (fixtures/upstream: `//` license and
comment lines, `about` prose) against the facts-only form it must write (fixtures/synced), so no test needs the
upstream copy, which lives outside the repository.
"""

import json
from pathlib import Path

from wirebroker.protocol.codegen.__main__ import main as codegen_main
from wirebroker.protocol.codegen.sync import sync

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def test_generated_modules_are_current(capsys):
    assert codegen_main(["--check"]) == 0, capsys.readouterr().err


def test_schemas_carry_no_upstream_prose():
    for path in (ROOT / "schemas").glob("*/*.json"):
        text = path.read_text()
        assert '"about"' not in text and "//" not in text and "Licensed" not in text, path


def test_sync_writes_the_facts_only_form_of_upstream_specs(tmp_path):
    expected_dir = FIXTURES / "synced"
    version = json.loads((expected_dir / "SOURCE.json").read_text())["version"]
    assert sync(FIXTURES / "upstream", version, tmp_path) == 6
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.json"))
    assert written == sorted(p.relative_to(expected_dir) for p in expected_dir.rglob("*.json"))
    for path in written:
        text = (tmp_path / path).read_text()
        assert '"about"' not in text and "//" not in text and "Licensed" not in text, path
        assert text == (expected_dir / path).read_text(), path


def test_manifest_never_advertises_an_unstable_version():
    manifest = {e["name"]: e for e in json.loads((ROOT / "schemas" / "manifest.json").read_text())}
    assert manifest["EndTxn"]["max_version"] == 4  # schema 0-5, v5 marked latestVersionUnstable
    assert manifest["Produce"]["min_version"] == 0 and manifest["Fetch"]["min_version"] == 0
    assert manifest["CreateTopics"]["min_version"] == 2  # Kafka 4 removed v0-1 (KIP-896)
    assert "LeaderAndIsr" not in manifest  # controller-to-broker only
