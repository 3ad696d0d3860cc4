"""The multi-broker test harness: its pure helpers, and a real cluster (ZooKeeper + three brokers) coming up,
losing a broker and getting it back."""

from __future__ import annotations

import itertools

import pytest

from tests.integration.cluster_process import (
    ClusterProcess,
    cluster_defaults,
    log_tail,
    wait_until,
)


def test_wait_until_returns_the_first_truthy_value():
    values = itertools.chain([None, 0, ValueError("not yet")], itertools.repeat("ready"))

    def condition():
        value = next(values)
        if isinstance(value, Exception):
            raise value
        return value

    assert wait_until(condition, 5, "ready", interval=0.001) == "ready"


def test_wait_until_names_what_it_waited_for_and_the_last_answer():
    with pytest.raises(AssertionError) as failure:
        wait_until(list, 0.05, "a leader for t-0", interval=0.01, describe=lambda: "broker logs here")
    message = str(failure.value)
    assert "a leader for t-0: not within 0s (last: [])" in message and message.endswith("broker logs here")


def test_defaults_scale_with_the_cluster_size():
    assert cluster_defaults(3)["default.replication.factor"] == "3"
    assert cluster_defaults(3)["min.insync.replicas"] == "2"
    one = cluster_defaults(1)
    assert (one["default.replication.factor"], one["offsets.topic.replication.factor"],
            one["min.insync.replicas"]) == ("1", "1", "1")


def test_log_tail_keeps_the_last_lines():
    assert log_tail("a\nb\nc\n", 2) == "b\nc"


def test_a_cluster_registers_every_broker_and_survives_the_loss_of_one(tmp_path):
    with ClusterProcess(tmp_path, brokers=3) as cluster:
        assert cluster.alive() == [1, 2, 3]
        assert cluster.registered_brokers() == [1, 2, 3]
        assert cluster.controller_id() in (1, 2, 3)
        assert sorted(b.node_id for b in cluster.metadata().brokers) == [1, 2, 3]
        victim = 3 if cluster.controller_id() != 3 else 2
        cluster.kill(victim)
        cluster.wait_until(lambda: victim not in cluster.registered_brokers(), 30,
                           f"broker {victim} gone from /brokers/ids after kill -9")
        cluster.restart(victim)
        assert cluster.registered_brokers() == [1, 2, 3]
