"""The `wirebroker` command: its defaults, Kafka-style configs, overrides, and clear failures on bad config."""

from __future__ import annotations

import subprocess
import sys

from tests.integration.broker_process import BrokerProcess, free_port


def run_cli(*args: str, cwd=None, timeout: float = 20) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wirebroker", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)


def test_unknown_key_fails_naming_it(tmp_path):
    result = run_cli("--override", "log.segmnet.bytes=1000", cwd=tmp_path)
    assert result.returncode != 0
    assert "log.segmnet.bytes" in result.stderr


def test_malformed_value_fails_naming_the_key(tmp_path):
    result = run_cli("--override", "num.partitions=many", cwd=tmp_path)
    assert result.returncode != 0
    assert "num.partitions" in result.stderr


def test_topic_default_out_of_range_fails_naming_the_key(tmp_path):
    result = run_cli("--override", "log.segment.bytes=10", cwd=tmp_path)
    assert result.returncode != 0
    assert "segment.bytes" in result.stderr


def test_properties_file_then_overrides(tmp_path):
    port = free_port()
    properties = tmp_path / "server.properties"
    properties.write_text(
        "# a Kafka-style file\n"
        f"listeners=PLAINTEXT://127.0.0.1:{port}\n"
        f"log.dirs={tmp_path / 'from-file'}\n"
        "num.partitions=3\n"
        "process.roles=broker,controller\n"
    )
    process = subprocess.Popen([sys.executable, "-m", "wirebroker", str(properties), "--override",
                                f"log.dirs={tmp_path / 'from-override'}"], stdout=subprocess.PIPE, text=True)
    try:
        banner = process.stdout.readline()
        assert f"PLAINTEXT://127.0.0.1:{port}" in banner
        assert str(tmp_path / "from-override") in banner
    finally:
        process.terminate()
        assert process.wait(20) == 0
    assert (tmp_path / "from-override").is_dir() and not (tmp_path / "from-file").exists()


def test_default_start_uses_local_data_dir_and_localhost(tmp_path):
    port = free_port()  # 9092 may be taken on a developer's machine; everything else is the default
    process = subprocess.Popen([sys.executable, "-m", "wirebroker", "--override",
                                f"listeners=PLAINTEXT://localhost:{port}"], cwd=tmp_path, stdout=subprocess.PIPE,
                               text=True)
    try:
        banner = process.stdout.readline()
        assert f"localhost:{port}" in banner and "wirebroker-data" in banner
    finally:
        process.terminate()
        assert process.wait(20) == 0
    assert (tmp_path / "wirebroker-data" / "meta.properties").exists()


def test_sigterm_is_a_clean_shutdown(tmp_path):
    broker = BrokerProcess(tmp_path / "data").start()
    assert broker.stop() == 0
    assert (tmp_path / "data" / ".kafka_cleanshutdown").exists()
