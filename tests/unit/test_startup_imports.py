"""A single node starts in a blink: it imports neither replication's modules nor anything it needs only later.

A fresh interpreter imports what `wirebroker` imports before it listens (the broker, its dispatcher, every API it
serves) and reports the modules loaded and the APIs registered.
"""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = ("import json, sys, wirebroker.cli, wirebroker.server.broker, wirebroker.apis; "
         "from wirebroker.apis.registry import SERVED; "
         "print(json.dumps({'served': sorted(SERVED), 'modules': sorted(sys.modules)}))")
INTER_BROKER_KEYS = {4, 5, 6, 7, 56}  # LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown, AlterPartition
CLUSTER_ONLY = ("wirebroker.server.cluster_member", "wirebroker.apis.inter_broker", "wirebroker.cluster.zk",
                "wirebroker.cluster.metadata_cache", "wirebroker.replica.fetcher", "wirebroker.replica.alter_partition",
                "kazoo")
# the first batch checks its CRC (protocol/checksum.py); the first producer snapshot read or written loads construct
NEEDED_LATER = ("crc32c", "importlib.metadata", "construct")
CONFIGURED_ONLY = ("wirebroker.cluster.authorizer",)  # ACLs are enforced only with authorizer.class.name
HTTP_PORT_ONLY = ("wirebroker.server.web", "prometheus_client", "http.server")  # loaded only with http.listener
# loaded at a test's first fault rule (wirebroker.Broker().faults) or with the HTTP port
FAULTS_ONLY = ("wirebroker.server.faults", "wirebroker.server.fault_responses", "wirebroker.http_controls")


def _single_node_imports() -> dict:
    probe = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    return json.loads(probe.stdout)


def test_a_single_node_neither_imports_nor_serves_replication():
    loaded = _single_node_imports()
    assert not INTER_BROKER_KEYS & set(loaded["served"])
    assert [m for m in loaded["modules"] if m.startswith(CLUSTER_ONLY)] == []


def test_a_single_node_without_authorizer_class_name_loads_no_authorizer():
    assert [m for m in _single_node_imports()["modules"] if m.startswith(CONFIGURED_ONLY)] == []


def test_a_single_node_loads_the_checksum_library_at_its_first_batch_not_at_start():
    assert [m for m in _single_node_imports()["modules"] if m.startswith(NEEDED_LATER)] == []


def test_a_broker_without_http_listener_loads_nothing_of_the_http_port():
    assert [m for m in _single_node_imports()["modules"] if m.startswith(HTTP_PORT_ONLY)] == []


def test_a_broker_without_fault_rules_loads_no_fault_injection():
    assert [m for m in _single_node_imports()["modules"] if m.startswith(FAULTS_ONLY)] == []


# loaded only for a listener that is not PLAINTEXT (issue 14): TLS, SASL and the libraries behind them
SECURED_LISTENERS_ONLY = ("ssl", "_ssl", "jwt", "cryptography", "hmac", "wirebroker.network.tls",
                          "wirebroker.network.authenticator", "wirebroker.network.channel_security",
                          "wirebroker.server.security", "wirebroker.security")


def test_a_broker_with_plaintext_listeners_loads_nothing_of_tls_or_sasl():
    assert [m for m in _single_node_imports()["modules"] if m.startswith(SECURED_LISTENERS_ONLY)] == []


# loaded when the log cleaner first has a log to clean: its process (issue 13) and what starts and talks to it, and
# the offset map's hashlib (OpenSSL)
CLEANING_ONLY = ("wirebroker.log.cleaner_process", "multiprocessing", "hashlib", "_hashlib")


def test_a_broker_loads_the_cleaner_process_at_its_first_cleaning_not_at_start():
    assert [m for m in _single_node_imports()["modules"] if m.startswith(CLEANING_ONLY)] == []


# loaded once a client quota (producer/consumer byte rate, request percentage) is set (issue 14)
CLIENT_QUOTAS_ONLY = ("wirebroker.server.quota_managers", "wirebroker.network.quota_rate",
                      "wirebroker.server.request_throttling")


def test_a_broker_without_client_quotas_loads_no_throttling():
    assert [m for m in _single_node_imports()["modules"] if m.startswith(CLIENT_QUOTAS_ONLY)] == []


def test_a_broker_never_loads_the_spark_data_source():
    assert [m for m in _single_node_imports()["modules"] if m.startswith(("wirebroker.spark", "pyspark", "pyarrow"))] \
        == []


# loaded at the first share-group request (apis/share_services.py) or share-group record (issue 17)
SHARE_GROUPS_ONLY = ("wirebroker.coordinator.share_",)


def test_a_broker_whose_clients_use_no_share_group_loads_none_of_them():
    assert [m for m in _single_node_imports()["modules"] if m.startswith(SHARE_GROUPS_ONLY)] == []


# an API's module and its codec load at the API's first request (apis/__init__.py registers every API without them)
FIRST_REQUEST_ONLY = {f"wirebroker.{package}.{api}" for package in ("apis", "protocol.messages")
                      for api in ("produce", "fetch", "metadata", "list_offsets", "offset_fetch", "create_topics",
                                  "share_fetch", "share_acknowledge", "describe_client_quotas",
                                  "alter_user_scram_credentials")}


def test_a_broker_loads_each_api_at_its_first_request():
    from wirebroker.apis import CLIENT_API_MODULES

    loaded = set(_single_node_imports()["modules"])
    assert [api for api in CLIENT_API_MODULES if f"wirebroker.apis.{api}" in loaded] == ["api_versions"]
    assert sorted(FIRST_REQUEST_ONLY & loaded) == []
