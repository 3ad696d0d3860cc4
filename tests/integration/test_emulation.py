"""Version emulation (issue 15 item 3): a broker started to emulate an Apache Kafka release looks like that release to
the clients that infer a broker's release from ApiVersions, and refuses what the release would not serve.

What the Java client does against the real Apache Kafka 3.6.2 (run once with compat_tests/kafka_releases.py's
broker and EmulationProbe, kafka-clients 4.4.0): produce ok, consume-classic ok, consume-consumer-protocol refused
UnsupportedVersionException ("The cluster does not support the new CONSUMER group protocol ..."). kafka-clients
4.x still talks to brokers from 2.1 on (KIP-896), so it does not refuse a 3.6 broker outright: it refuses the
KIP-848 consumer protocol, which 3.6 does not offer.
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaConsumer

import wirebroker
from tests.integration.raw_client import RawClient
from wirebroker.config import EMULATE_KEY, EMULATED_KAFKA_VERSIONS
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.api_versions import ApiVersionsResponse

API_VERSIONS, DESCRIBE_CLUSTER, CONSUMER_GROUP_HEARTBEAT = 18, 60, 68
PROBE_SOURCE = Path(__file__).parent / "java" / "EmulationProbe.java"


@pytest.mark.parametrize("line", EMULATED_KAFKA_VERSIONS)
def test_kafka_python_infers_the_emulated_release(line):
    with wirebroker.Broker(emulate=line) as broker:
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
        try:
            assert admin._client.check_version() == tuple(map(int, line.split(".")))
        finally:
            admin.close()


def test_a_request_above_the_emulated_release_gets_unsupported_version():
    with wirebroker.Broker(emulate="3.6") as broker, RawClient(broker.bootstrap_servers) as client:
        assert client.request(DESCRIBE_CLUSTER, 0).error_code == ErrorCode.NONE  # Kafka 3.6 serves v0 only
        assert client.request(DESCRIBE_CLUSTER, 1).error_code == ErrorCode.UNSUPPORTED_VERSION
        heartbeat = client.request(CONSUMER_GROUP_HEARTBEAT, 0, group_id="g", member_epoch=0, rebalance_timeout_ms=1,
                                   subscribed_topic_names=["t"], topic_partitions=[])
        assert heartbeat.error_code == ErrorCode.UNSUPPORTED_VERSION  # KIP-848 is not in 3.6
        # ApiVersions v4 is newer than 3.6's v3: the v0 answer with error 35 lists 3.6's ApiVersions range alone, as
        # Kafka does since 2.4 (KIP-511).
        client.send_frame(struct.pack(">hhi", API_VERSIONS, 4, 42) + b"\x00\x04test" + b"\x00" + b"\x00\x00\x00")
        response = ApiVersionsResponse.decode(client.read_frame()[4:], 0)
        assert response.error_code == ErrorCode.UNSUPPORTED_VERSION
        assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(API_VERSIONS, 0, 3)]
        v3 = client.request(API_VERSIONS, 3, client_software_name="test", client_software_version="1")
        assert [(f.name, f.max_version_level) for f in v3.finalized_features] == [("metadata.version", 14)]
        assert v3.finalized_features_epoch > 0


@pytest.mark.usefixtures("jdk_and_maven")
def test_java_clients_4_see_kafka_3_6(broker_factory):
    from compat_tests.cache import DEFAULT_CACHE_DIR
    from compat_tests.installers import DRIVER_JVM_OPTS, compile_java
    from compat_tests.maven import classpath, fetch_jars

    jars = fetch_jars("clients-4")
    classes = compile_java(PROBE_SOURCE, jars, DEFAULT_CACHE_DIR / "java" / "emulation-probe")
    broker = broker_factory(**{EMULATE_KEY: "3.6"})
    probe = subprocess.run(["java", *DRIVER_JVM_OPTS, "-cp", f"{classes}:{classpath(jars)}", "EmulationProbe",
                            broker.bootstrap, "probe"], capture_output=True, text=True, timeout=180, check=False)
    lines = probe.stdout.splitlines()
    assert lines[:2] == ["produce ok", "consume-classic ok"], probe.stdout + probe.stderr
    assert lines[2].startswith("consume-consumer-protocol refused UnsupportedVersionException: The cluster does not "
                               "support the new CONSUMER group protocol"), probe.stdout + probe.stderr


def test_the_embedded_helpers_work_against_the_oldest_emulated_release():
    with wirebroker.Broker(emulate=EMULATED_KAFKA_VERSIONS[0]) as broker:
        broker.create_topic("orders")
        assert broker.produce("orders", [b"one", (b"k", b"two")]) == [0, 1]
        assert broker.read("orders") == [(0, None, b"one"), (1, b"k", b"two")]
        consumer = KafkaConsumer("orders", bootstrap_servers=broker.bootstrap_servers, group_id="helpers",
                                 auto_offset_reset="earliest")
        try:
            consumer.poll(timeout_ms=5000)
            broker.wait_for_group_stable("helpers")
        finally:
            consumer.close()
