"""What operators see of the log cleaner (issue 13, item 5) on a real broker process: DescribeLogDirs sizes that
drop with a cleaning to what the segments hold on disk, and the cleaner's gauges on /metrics."""

from __future__ import annotations

import os

from tests.integration.test_compaction import (
    CLEANER,
    COMPACTED,
    active_size,
    create_topic,
    log_bytes,
    partition_dir,
    produce,
    wait_until_clean,
)
from tests.integration.test_http_port import get_metrics
from wirebroker.network.ports import free_port


def describe_partition(bootstrap: str, topic: str) -> tuple[str, dict, dict]:
    """(log dir, the dir's result, the partition's result) of partition 0 of `topic`, from kafka-python's admin."""
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        [answer] = admin.describe_log_dirs()
    finally:
        admin.close()
    for result in answer["log_dirs"]:
        for t in result["topics"]:
            for p in t["partitions"]:
                if (t["name"], p["partition_index"]) == (topic, 0):
                    return result["log_dir"], result, p
    raise AssertionError(f"{topic}-0 is in no log dir of {answer}")


def test_describe_log_dirs_and_metrics_show_the_cleaned_log(broker_factory):
    url = f"http://127.0.0.1:{free_port()}"
    # The smallest offset map (1 MiB, about 40,000 keys), so that 1,000 keys fill a whole percent of it.
    broker = broker_factory(**CLEANER, **{"http.listener": url, "log.cleaner.dedupe.buffer.size": str(1024 * 1024)})
    create_topic(broker.bootstrap, "table", COMPACTED)
    written = [(b"key-%d" % (i % 1000), b"value-%06d" % i) for i in range(30_000)]
    produce(broker.bootstrap, "table", written)
    wait_until_clean(broker, "table")

    log_dir, result, partition = describe_partition(broker.bootstrap, "table")
    assert log_dir == os.path.abspath(broker.data_dir)
    # The size is the live segments' after the cleanings' swaps: what is on disk. Below the active segment the
    # cleaned segments hold one record per key (1,000 of about 40 bytes, and their batches' headers).
    assert partition["partition_size"] == log_bytes(broker, "table")
    assert partition["partition_size"] - active_size(broker, "table") < 60_000
    assert (partition["offset_lag"], partition["is_future_key"]) == (0, False)
    stats = os.statvfs(log_dir)
    assert result["total_bytes"] == stats.f_blocks * stats.f_frsize
    assert 0 < result["usable_bytes"] <= result["total_bytes"]
    assert not [p for p in partition_dir(broker, "table").iterdir() if p.name.endswith((".cleaned", ".swap"))]

    metrics = get_metrics(url)
    gauge = {name.removeprefix("kafka_log_"): value for (name, labels), value in metrics.items()
             if name.startswith("kafka_log_logcleaner") and not labels}
    # Everything below the active segment is clean: no log is dirty now.
    assert gauge["logcleanermanager_max_dirty_percent"] == 0
    # The threads choose a log every log.cleaner.backoff.ms (50 ms here).
    assert 0 <= gauge["logcleanermanager_time_since_last_run_ms"] < 60_000
    assert 0 < gauge["logcleaner_max_buffer_utilization_percent"] <= 100
    assert 0 < gauge["logcleaner_cleaner_recopy_percent"] < 100  # the last cleaning dropped the older values
    assert gauge["logcleaner_max_clean_time_secs"] >= 0
    assert gauge["logcleaner_max_compaction_delay_secs"] == 0  # max.compaction.lag.ms is unbounded by default
    assert gauge["logcleaner_deadthreadcount"] == 0
    for name in ("uncleanable_partitions_count", "uncleanable_bytes"):
        assert metrics[(f"kafka_log_logcleanermanager_{name}", (("logdirectory", log_dir),))] == 0
