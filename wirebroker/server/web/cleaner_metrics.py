"""The log cleaner's gauges on /metrics, as Kafka's JMX exporter names kafka.log:type=LogCleaner and
type=LogCleanerManager, computed as Kafka's LogCleaner and LogCleanerManager register them.

    kafka_log_logcleanermanager_max_dirty_percent                   the dirtiest compacted log's dirty ratio at the
                                                                    last choice, in whole percent
    kafka_log_logcleanermanager_time_since_last_run_ms              since a cleaner thread last chose a log
    kafka_log_logcleanermanager_uncleanable_partitions_count{logdirectory}  partitions a failed cleaning set aside
    kafka_log_logcleanermanager_uncleanable_bytes{logdirectory}     the bytes those partitions leave dirty
    kafka_log_logcleaner_cleaner_recopy_percent                     bytes written / bytes read over each thread's last
                                                                    cleaning, in whole percent
    kafka_log_logcleaner_max_clean_time_secs                        the longest of the threads' last cleanings
    kafka_log_logcleaner_max_buffer_utilization_percent             the fullest offset map of the threads' last cleanings
    kafka_log_logcleaner_max_compaction_delay_secs                  how long past max.compaction.lag.ms the most overdue
                                                                    log was at the threads' last choices
    kafka_log_logcleaner_deadthreadcount                            cleaner threads that stopped

Every figure but uncleanable-bytes is one the cleaner keeps anyway (its manager's last choice, each thread's last
CleanerStats and PreCleanStats): a scrape reads them and the cleaner does no work for it. uncleanable-bytes is worked out at the scrape,
as Kafka's gauge does, and only for the partitions marked uncleanable (normally none). A broker with
log.cleaner.enable=false has no cleaner and no gauges.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily

from wirebroker.log.local_log import now_ms

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from wirebroker.log.cleaner import LogCleaner


def cleaner_gauges(cleaner: LogCleaner | None) -> Iterator[Metric]:
    if cleaner is None:
        return
    manager = cleaner.manager
    yield GaugeMetricFamily("kafka_log_logcleanermanager_max_dirty_percent",
                            "Dirty ratio of the dirtiest compacted log at the cleaner's last choice, in percent",
                            value=int(100 * manager.dirtiest_log_cleanable_ratio))
    yield GaugeMetricFamily("kafka_log_logcleanermanager_time_since_last_run_ms",
                            "Milliseconds since a cleaner thread last chose a log to clean",
                            value=now_ms() - manager.time_of_last_run)
    uncleanable = GaugeMetricFamily("kafka_log_logcleanermanager_uncleanable_partitions_count",
                                    "Partitions of the log dir that a failed cleaning marked uncleanable",
                                    labels=["logdirectory"])
    uncleanable_bytes = GaugeMetricFamily("kafka_log_logcleanermanager_uncleanable_bytes",
                                          "Cleanable bytes of the log dir's uncleanable partitions",
                                          labels=["logdirectory"])
    for log_dir, (count, size) in sorted(manager.uncleanable_partitions(now_ms()).items()):
        uncleanable.add_metric([log_dir], count)
        uncleanable_bytes.add_metric([log_dir], size)
    yield uncleanable
    yield uncleanable_bytes
    stats = list(cleaner.last_stats.values())
    recopy = sum(s.bytes_written for s in stats) / max(sum(s.bytes_read for s in stats), 1)
    yield GaugeMetricFamily("kafka_log_logcleaner_cleaner_recopy_percent",
                            "Bytes written over bytes read by the cleaner threads' last cleanings, in percent",
                            value=int(100 * recopy))
    yield GaugeMetricFamily("kafka_log_logcleaner_max_clean_time_secs",
                            "Seconds taken by the longest of the cleaner threads' last cleanings",
                            value=int(max((s.elapsed_seconds for s in stats), default=0.0)))
    yield GaugeMetricFamily("kafka_log_logcleaner_max_buffer_utilization_percent",
                            "Fullest offset map of the cleaner threads' last cleanings, in percent",
                            value=int(100 * max((s.buffer_utilization for s in stats), default=0.0)))
    delays = [s.max_compaction_delay_ms for s in cleaner.last_pre_clean_stats.values()]
    yield GaugeMetricFamily("kafka_log_logcleaner_max_compaction_delay_secs",
                            "Seconds past max.compaction.lag.ms of the most overdue log at the threads' last choices",
                            value=int(max(delays, default=0) / 1000))
    yield GaugeMetricFamily("kafka_log_logcleaner_deadthreadcount", "Cleaner threads that stopped",
                            value=cleaner.dead_thread_count())
