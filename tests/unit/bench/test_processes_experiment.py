"""The multi-process experiment's own parts (bench/processes_experiment.py, bench/reuseport_broker.py): the shared
port, the workloads it scales and the table it writes. Its measurements run real brokers and are not tests."""

from __future__ import annotations

import socket

import pytest

from bench import processes_experiment as experiment
from bench.reuseport_broker import share_port
from bench.workloads import suite


def _listen(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", port))
    sock.listen()
    return sock


def test_share_port_lets_a_second_listener_bind_the_same_port_and_only_that_port(monkeypatch):
    monkeypatch.setattr(socket.socket, "bind", socket.socket.bind)  # share_port patches it: restored after the test
    first = _listen(0)
    port = first.getsockname()[1]
    first.close()
    share_port(port)
    with _listen(port) as one, _listen(port) as two:
        assert one.getsockname()[1] == two.getsockname()[1] == port
        other = _listen(0)
        with other, pytest.raises(OSError):
            _listen(other.getsockname()[1])  # any other port keeps the usual rule: one listener


def test_scaled_workloads_are_the_suites_with_fewer_records():
    full = {w.name: w for w in suite("full")}
    scaled = experiment.scaled_workloads(0.25)
    assert [w.name for w in scaled] == list(experiment.WORKLOADS)
    for workload in scaled:
        assert workload.num_records == int(full[workload.name].num_records * 0.25)
        assert workload.partitions == 10


def _entry(records_per_s: float) -> dict:
    return {"figures": {"records_per_s": records_per_s, "mb_per_s": records_per_s / 1000}, "cpu_s_per_gb": 2.0,
            "load_cpu_s_per_gb": 20.0, "zookeeper_cpu_s": 0.0, "others_share": 0.05}


def test_render_layouts_gives_the_median_and_range_of_the_rounds_per_layout():
    runs = {name: [{"workloads": {"produce-x": _entry(v)}} for v in values]
            for name, values in (("single", (100.0, 300.0, 200.0)), ("zk2", (50.0, 60.0, 70.0)))}
    table = experiment.render_layouts(runs)
    assert "| produce-x | records/s | 200.00 (100.00-300.00) | 60.00 (50.00-70.00) |" in table
    assert "Medians of 3 round(s)" in table


def test_render_reuseport_names_each_setting_and_the_brokers_met():
    chunk = {"requests_per_s": 5000.0, "p50_us": 900.0, "cpu_us_per_request": 25.0, "others_share": 0.1}
    result = {"connections": 8, "requests_per_connection": 100, "chunks": {1: [chunk], 2: [chunk, chunk]},
              "metadata_answers": {1: {"0": 40}, 2: {"0": 19, "1": 21}}}
    table = experiment.render_reuseport(result)
    assert "| 2 | 5,000.00 (5,000.00-5,000.00) |" in table
    assert "- 2 process(es): {'0': 19, '1': 21}" in table


def test_render_owner_pings_gives_one_row_per_layout():
    chunk = {"requests_per_s": 6000.0, "p50_us": 400.0, "cpu_us_per_request": 100.0, "others_share": 0.5}
    result = {"pingers": 2, "connections_per_pinger": 4, "requests_per_connection": 100,
              "chunks": {"single": [chunk], "zk2": [chunk, chunk]}}
    table = experiment.render_owner_pings(result)
    assert "from 2 client processes x 4 connections" in table
    assert "| zk2 | 6,000.00 (6,000.00-6,000.00) | 400.00" in table
