"""Apache Kafka's own DumpLogSegments reads our segments and indexes: the on-disk format is Kafka's."""

from __future__ import annotations

from compat_tests.reference_kafka import install_jars, run_tool
from tests.integration.raw_client import RawClient
from tests.integration.test_data_path_errors import a_batch, create_topic, produce
from wirebroker.protocol.errors import ErrorCode

DUMP_LOG_SEGMENTS = "org.apache.kafka.tools.DumpLogSegments"


def test_dump_log_segments_reads_our_log_and_indexes(broker_factory):
    broker = broker_factory(**{"log.index.interval.bytes": "100"})  # several index entries in a small log
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "dumped")
        for codec in (0, 1, 2, 3, 4, 0):
            assert produce(client, "dumped", a_batch(4, codec, value_size=50)).error_code == ErrorCode.NONE
    broker.stop()  # a clean shutdown trims the indexes as Kafka does
    jars = install_jars()
    segment = broker.data_dir / "dumped-0" / "00000000000000000000"
    dump = run_tool(jars, DUMP_LOG_SEGMENTS, ["--deep-iteration", "--files", f"{segment}.log"], check=True).stdout
    assert dump.count("baseOffset:") == 6
    assert dump.count("| offset:") == 24
    assert "isvalid: true" in dump and "isvalid: false" not in dump
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        assert f"compresscodec: {codec}" in dump.lower()
    verified = run_tool(jars, DUMP_LOG_SEGMENTS, ["--verify-index-only", "--files", f"{segment}.index"], check=True)
    assert "Mismatches" not in verified.stdout and "corrupt" not in verified.stdout.lower()
    times = run_tool(jars, DUMP_LOG_SEGMENTS, ["--files", f"{segment}.timeindex"], check=True).stdout
    assert "timestamp:" in times and "Found timestamp mismatch" not in times
