"""The committed generated code is what the generator makes from schemas/, and schemas/ is what the sync tool makes
from the Kafka jars pinned in schemas/jars.json (fetched into .cache/kafka-jars/ by the tool itself when missing).
"""

import json
import zipfile
from pathlib import Path

import pytest

from wirebroker.protocol.codegen.__main__ import main as codegen_main
from wirebroker.protocol.codegen.jars import (
    DEFAULT_CACHE,
    Artifact,
    JarError,
    fetch,
    load_pins,
)
from wirebroker.protocol.codegen.merge import (
    MergeError,
    check_merged,
    merge,
    older_range,
)
from wirebroker.protocol.codegen.sync import read_artifacts, sync

ROOT = Path(__file__).resolve().parents[3]
SCHEMAS = ROOT / "schemas"
PINS_FILE = "jars.json"  # the sync tool's input, not its output

# What Apache Kafka 4.3.1 answered to ApiVersions v0 (a single-node KRaft broker, checked by hand in November 2026).
KAFKA_4_3_1_MEASURED = {
    0: (0, 13), 1: (4, 18), 2: (1, 11), 3: (0, 13), 8: (2, 10), 9: (1, 10), 10: (0, 6), 11: (0, 9), 12: (0, 4),
    13: (0, 5), 14: (0, 5), 15: (0, 6), 16: (0, 5), 17: (0, 1), 18: (0, 4), 19: (2, 7), 20: (1, 6), 21: (0, 2),
    22: (0, 5), 23: (2, 4), 24: (0, 5), 25: (0, 4), 26: (0, 5), 27: (1, 2), 28: (0, 5), 29: (1, 3), 30: (1, 3),
    31: (1, 3), 32: (1, 4), 33: (0, 2), 36: (0, 2), 37: (0, 3), 42: (0, 2), 44: (0, 1), 47: (0, 0), 60: (0, 2),
    61: (0, 0), 65: (0, 0), 66: (0, 2), 68: (0, 1), 69: (0, 1), 75: (0, 0),
}
KAFKA_4_3_1_KEY_COUNT = 75


def _manifest(name: str) -> dict:
    return {e["name"]: e for e in json.loads((SCHEMAS / name).read_text())}


def test_generated_modules_are_current(capsys):
    assert codegen_main(["--check"]) == 0, capsys.readouterr().err


def test_schemas_carry_no_upstream_prose():
    for path in SCHEMAS.rglob("*.json"):
        text = path.read_text()
        assert '"about"' not in text and "//" not in text and "Licensed" not in text, path


def test_sync_reproduces_the_committed_schemas_from_the_pinned_jars(tmp_path):
    pins = load_pins()
    assert sync(pins, read_artifacts(pins, DEFAULT_CACHE), tmp_path) > 250
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.json"))
    committed = sorted(str(p.relative_to(SCHEMAS)) for p in SCHEMAS.rglob("*.json") if p.name != PINS_FILE)
    assert written == committed
    for name in written:
        assert (tmp_path / name).read_text() == (SCHEMAS / name).read_text(), name
    source = json.loads((SCHEMAS / "SOURCE.json").read_text())
    assert source["artifacts"][0]["coordinates"] == "org.apache.kafka:kafka-clients:4.3.1"


def test_a_jar_that_is_not_the_pinned_one_is_refused(tmp_path):
    artifact = Artifact("org.example:fake:1.0", "common/message/", "clients", "0" * 64)
    with zipfile.ZipFile(tmp_path / artifact.file_name, "w") as jar:
        jar.writestr("common/message/FakeRequest.json", "{}")
    with pytest.raises(JarError, match="sha256"):
        fetch(artifact, tmp_path)
    assert not (tmp_path / artifact.file_name).exists()


def test_kafka_advertised_set_is_what_kafka_4_3_1_answers():
    advertised = {e["api_key"]: (e["min_version"], e["max_version"]) for e in _manifest("kafka-advertised.json").values()}
    assert len(advertised) == KAFKA_4_3_1_KEY_COUNT
    assert {key: advertised.get(key) for key in KAFKA_4_3_1_MEASURED} == KAFKA_4_3_1_MEASURED


def test_manifest_keeps_old_floors_and_never_advertises_an_unstable_version():
    manifest = _manifest("manifest.json")
    assert manifest["InitProducerId"]["max_version"] == 5  # schema 0-6, v6 marked latestVersionUnstable
    assert manifest["Produce"]["min_version"] == 0 and manifest["Fetch"]["min_version"] == 0  # KAFKA-18659
    assert manifest["ListOffsets"]["min_version"] == 0 and manifest["OffsetCommit"]["min_version"] == 0
    assert manifest["CreateTopics"]["min_version"] == 2  # Kafka 4 removed v0-1 (KIP-896)
    assert "LeaderAndIsr" not in manifest  # controller-to-broker only
    assert manifest["ConsumerGroupHeartbeat"]["max_version"] == 1  # stable in 4.3.1


# ---- merge: the versions Kafka 4 removed, kept from the older release -------------------------------------------

OLDER = {
    "name": "ThingRequest", "validVersions": "0-4", "flexibleVersions": "3+",
    "fields": [
        {"name": "A", "type": "int32", "versions": "0+"},
        {"name": "Gone", "type": "int64", "versions": "0-1"},
        {"name": "Items", "type": "[]Item", "versions": "0+", "fields": [
            {"name": "X", "type": "int16", "versions": "0+"},
            {"name": "OldOnly", "type": "string", "versions": "0"},
        ]},
    ],
}
NEWER = {
    "name": "ThingRequest", "validVersions": "2-5", "flexibleVersions": "3+",
    "fields": [
        {"name": "A", "type": "int32", "versions": "2+"},
        {"name": "Items", "type": "[]Item", "versions": "0+", "fields": [
            {"name": "X", "type": "int16", "versions": "0+"},
            {"name": "New", "type": "uuid", "versions": "5+"},
        ]},
    ],
}


def test_merge_keeps_the_older_versions_below_the_newer_floor():
    merged = merge(OLDER, NEWER)
    check_merged(merged, OLDER, NEWER)
    assert merged["validVersions"] == "0-5"
    assert [f["name"] for f in merged["fields"]] == ["A", "Gone", "Items"]
    assert merged["fields"][0]["versions"] == "0+"
    assert merged["fields"][1]["versions"] == "0-1"
    assert [(f["name"], f["versions"]) for f in merged["fields"][2]["fields"]] == [
        ("X", "0+"), ("OldOnly", "0"), ("New", "5+")]
    assert older_range(OLDER, NEWER) == "0-1"


def test_merge_takes_a_removed_api_whole_and_no_early_access_version():
    removed = {"name": "ThingRequest", "validVersions": "none"}
    assert merge(OLDER, removed) is OLDER
    assert older_range(OLDER, removed) == "0-4"
    assert older_range(OLDER, NEWER, older_unstable=True) == "0-1"
    early = {**OLDER, "validVersions": "0"}
    assert merge(early, NEWER, older_unstable=True) is NEWER


def test_check_merged_refuses_a_version_laid_out_otherwise():
    merged = merge(OLDER, NEWER)
    merged["fields"][1]["versions"] = "0"  # Gone lost its v1
    with pytest.raises(MergeError, match="v1"):
        check_merged(merged, OLDER, NEWER)
