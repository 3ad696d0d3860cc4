"""The stored ApiVersions answers of Apache Kafka's releases (apis/releases/, written by
`python -m compat_tests.kafka_releases`) and the tables an emulating broker builds from them."""

from __future__ import annotations

import itertools
import json

import pytest

import wirebroker.apis.inter_broker  # noqa: F401  (a cluster member's APIs: never advertised, always served)
from wirebroker.apis.emulation import (
    RELEASES_DIR,
    api_table,
    read_release,
    release_versions,
)
from wirebroker.apis.registry import SERVED, supported_versions
from wirebroker.cli import parse_args
from wirebroker.config import EMULATE_KEY, EMULATED_KAFKA_VERSIONS
from wirebroker.protocol.messages import (
    API_SPECS,
    KAFKA_ADVERTISED_VERSIONS,
    KAFKA_VERSION,
)

PRODUCE, API_VERSIONS, END_TXN, TXN_OFFSET_COMMIT = 0, 18, 26, 28


def test_a_table_is_stored_for_every_release_the_config_accepts():
    stored = sorted(path.name for path in RELEASES_DIR.glob("kafka-*.json"))
    assert stored == sorted(f"kafka-{line}.json" for line in EMULATED_KAFKA_VERSIONS)


@pytest.mark.parametrize("line", EMULATED_KAFKA_VERSIONS)
def test_a_stored_table_is_a_broker_answer_of_its_release(line):
    release = read_release(line)
    assert release["kafka_version"].startswith(f"{line}.")
    assert release["artifact"] == f"org.apache.kafka:kafka_2.13:{release['kafka_version']}"
    keys = [entry["api_key"] for entry in release["api_keys"]]
    assert keys == sorted(set(keys)) and API_VERSIONS in keys
    for entry in release["api_keys"]:
        assert 0 <= entry["min_version"] <= entry["max_version"]
        assert entry["name"] == API_SPECS[entry["api_key"]].name
    # A freshly formatted cluster runs at its release's newest metadata.version.
    supported = {f["name"]: f for f in release["supported_features"]}
    finalized = {f["name"]: f for f in release["finalized_features"]}
    assert finalized["metadata.version"]["max_version_level"] == supported["metadata.version"]["max_version"]
    assert all(supported[name]["min_version"] <= f["max_version_level"] <= supported[name]["max_version"]
               for name, f in finalized.items())


def test_releases_only_add_versions():
    for older, newer in itertools.pairwise(EMULATED_KAFKA_VERSIONS):
        before, after = release_versions(read_release(older)), release_versions(read_release(newer))
        assert all(after[key][1] >= high for key, (_, high) in before.items() if key in after), (older, newer)


def test_the_real_broker_advertises_what_the_schemas_of_its_jars_say():
    """The schemas' computed table (protocol/messages, from kafka-clients 4.3.1) equals the 4.3.1 broker's answer."""
    release = read_release(".".join(KAFKA_VERSION.split(".")[:2]))
    assert release["kafka_version"] == KAFKA_VERSION
    assert release_versions(release) == KAFKA_ADVERTISED_VERSIONS


def test_without_emulation_the_registry_is_the_table():
    table = api_table(None)
    assert dict(table.advertised) == supported_versions()
    assert dict(table.served) == {key: (api.min_version, api.max_version) for key, api in SERVED.items()}
    # Kafka 4.3.1's features whose level this broker honours, supported and finalized as the 4.3.1 broker lists them.
    release = read_release(".".join(KAFKA_VERSION.split(".")[:2]))
    honoured = {"share.version", "group.version", "transaction.version"}
    assert {(f.name, f.min_version, f.max_version) for f in table.supported_features} == {
        (f["name"], f["min_version"], f["max_version"]) for f in release["supported_features"] if f["name"] in honoured}
    assert {(f.name, f.min_version, f.max_version) for f in table.finalized_features} == {
        (f["name"], f["min_version_level"], f["max_version_level"]) for f in release["finalized_features"]
        if f["name"] in honoured}
    assert table.finalized_features_epoch == 1


@pytest.mark.parametrize("line", EMULATED_KAFKA_VERSIONS)
def test_an_emulated_table_is_the_release_narrowed_to_what_is_served(line):
    table, release, own = api_table(line), release_versions(read_release(line)), supported_versions()
    assert set(table.advertised) == {key for key in release if key in own
                                     and max(release[key][0], own[key][0]) <= min(release[key][1], own[key][1])}
    for key, (low, high) in table.advertised.items():
        assert (low, high) == (max(release[key][0], own[key][0]), min(release[key][1], own[key][1]))
        assert table.served[key] == (low, high)
    unadvertised = {key for key, api in SERVED.items() if not api.advertised}
    assert unadvertised and all(key in table.served for key in unadvertised)  # inter-broker APIs stay served
    names = {f.name for f in table.finalized_features}
    kip_890 = (table.advertised.get(PRODUCE, (0, 0))[1] >= 12 and table.advertised.get(END_TXN, (0, 0))[1] >= 5
               and table.advertised.get(TXN_OFFSET_COMMIT, (0, 0))[1] >= 5)
    assert ("transaction.version" in names) == kip_890
    assert {f.name for f in table.supported_features} == {f["name"] for f in read_release(line)["supported_features"]}


@pytest.mark.parametrize("line", EMULATED_KAFKA_VERSIONS)
def test_kafka_python_infers_the_release_from_the_emulated_table(line):
    infer = pytest.importorskip("kafka.protocol.broker_version_data").infer_broker_version_from_api_versions
    assert infer(api_table(line).advertised) == tuple(map(int, line.split(".")))


def test_the_command_line_emulate_is_the_config_key():
    assert parse_args(["--emulate", "3.6"]).override == [f"{EMULATE_KEY}=3.6"]
    with pytest.raises(SystemExit):
        parse_args(["--emulate", "3.7"])


def test_stored_tables_are_written_as_the_regeneration_writes_them():
    for line in EMULATED_KAFKA_VERSIONS:
        path = RELEASES_DIR / f"kafka-{line}.json"
        assert path.read_text() == json.dumps(json.loads(path.read_text()), indent=1) + "\n"
