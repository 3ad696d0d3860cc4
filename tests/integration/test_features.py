"""ApiVersions v3+ features on a real broker: share.version and group.version supported 0-1 and finalized at 1,
transaction.version supported 0-2 and finalized at 2, as Apache Kafka 4.3.1 lists them (apis/emulation.py's
OWN_FEATURE_LEVELS says why those three); Kafka's own kafka-features.sh (FeatureCommand, Java admin client 4.3.1) reads
them."""

from __future__ import annotations

import re

from compat_tests.reference_kafka import install_jars, run_tool
from tests.integration.raw_client import RawClient

API_VERSIONS = 18
FEATURE_COMMAND = "org.apache.kafka.tools.FeatureCommand"
HONOURED = {"group.version": 1, "share.version": 1, "transaction.version": 2}


def test_api_versions_v4_and_v3_report_the_honoured_features(broker):
    with RawClient(broker.bootstrap) as client:
        v4 = client.request(API_VERSIONS, 4, client_software_name="raw", client_software_version="1")
        v3 = client.request(API_VERSIONS, 3, client_software_name="raw", client_software_version="1")
    assert {f.name: (f.min_version, f.max_version) for f in v4.supported_features} == {
        name: (0, level) for name, level in HONOURED.items()}
    for answer in (v4, v3):
        assert {f.name: (f.min_version_level, f.max_version_level) for f in answer.finalized_features} == {
            name: (level, level) for name, level in HONOURED.items()}
        assert answer.finalized_features_epoch > 0
    assert v3.supported_features == []  # min version 0: hidden below v4, as Kafka (KAFKA-17011)


def test_kafka_features_tool_describes_them(broker):
    described = run_tool(install_jars(), FEATURE_COMMAND, ["--bootstrap-server", broker.bootstrap, "describe"],
                         check=True).stdout
    listed = {name: tuple(map(int, levels)) for name, *levels in re.findall(
        r"Feature: (\S+)\s+SupportedMinVersion: (\d+)\s+SupportedMaxVersion: (\d+)\s+FinalizedVersionLevel: (\d+)",
        described)}
    assert listed == {name: (0, level, level) for name, level in HONOURED.items()}
