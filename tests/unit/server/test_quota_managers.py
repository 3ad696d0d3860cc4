"""Kafka's windowed quota rate, throttle time and quota resolution (network/quota_rate.py, server/quota_managers.py)."""

from __future__ import annotations

from wirebroker.cluster.client_quotas import entity_of
from wirebroker.network.quota_rate import QuotaRate
from wirebroker.server.quota_managers import ClientQuotaManager


def test_a_fresh_rate_spans_ten_windows_so_a_first_burst_is_measured_over_them():
    rate = QuotaRate(bound=100.0)
    assert rate.record(1000, 0) == 0  # 1000 bytes over (11 - 1) windows of 1 s: 100/s, at the bound
    # 1100 bytes over 10 s: 110/s, 10 % over: silent for 10 % of the 10 s span
    assert rate.record(100, 0) == 1000


def test_throttle_time_brings_the_rate_back_to_the_bound():
    rate = QuotaRate(bound=1000.0)
    throttle = 0
    for second in range(30):
        throttle = rate.record(2000, second * 1000)
    measured, window = rate.measure(29 * 1000)
    assert measured > 1000 and throttle == round((measured - 1000) / 1000 * window)
    assert throttle == 12_000  # 11 samples of 2000 over the 10 s since the oldest began: 2200/s, 1.2 x 10 s


def test_old_samples_expire():
    rate = QuotaRate(bound=10.0)
    rate.record(10_000, 0)
    assert rate.record(1, 11_000) == 0  # 11 windows later the burst no longer counts


def test_resolution_follows_kafkas_precedence_and_sharing():
    manager = ClientQuotaManager("producer_byte_rate")
    manager.update({
        entity_of([("user", "alice")]): {"producer_byte_rate": 100.0},
        entity_of([("user", "alice"), ("client-id", "special")]): {"producer_byte_rate": 1000.0},
        entity_of([("client-id", None)]): {"producer_byte_rate": 50.0},
        entity_of([("user", "bob")]): {"consumer_byte_rate": 1.0},  # another key: not this manager's
    })
    assert manager._resolve("alice", "special") == (("alice", "special"), 1000.0)
    assert manager._resolve("alice", "other") == (("alice", ""), 100.0)  # one rate for all alice's clients
    assert manager._resolve("bob", "app") == (("", "app"), 50.0)  # the client-id default, shared per client id
    assert manager.max_value_in_window("bob", "app") == 500.0
    manager.update({})
    assert not manager.enabled and manager.record("alice", "special", 10**9, 0) == 0


def test_idle_sensors_go_once_too_many_clients_are_tracked(monkeypatch):
    from wirebroker.server import quota_managers

    monkeypatch.setattr(quota_managers, "MAX_TRACKED_CLIENTS", 3)
    manager = ClientQuotaManager("producer_byte_rate")
    manager.update({entity_of([("client-id", None)]): {"producer_byte_rate": 100.0}})
    for n in range(3):
        manager.record("u", f"c{n}", 10, 0)
    manager.record("u", "late", 10, 20_000)  # the first three have nothing in their windows by now
    assert set(manager._sensors) == {("", "late")}
