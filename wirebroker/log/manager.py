"""The logs of this broker across its log directories (Kafka's LogManager).

Each log dir holds, besides one directory per partition (files.py):

    meta.properties                    cluster.id, node.id, directory.id, version=1 (metadata_files.py)
    .lock                              held (flock) while a broker uses the directory
    recovery-point-offset-checkpoint   per partition, the offset up to which its log is flushed (checkpoints.py)
    log-start-offset-checkpoint        per partition, its log start offset
    replication-offset-checkpoint      per partition, its high watermark
    cleaner-offset-checkpoint          per compacted partition, its first dirty offset (cleaner_manager.py)
    .kafka_cleanshutdown               written last by a clean shutdown; its presence lets the next start skip
                                       recovery (metadata_files.py)

Start-up loads every partition directory in one pass; logs without the clean-shutdown marker recover from their
checkpointed recovery point. Background tasks (one scheduler thread): retention every
log.retention.check.interval.ms, the flush.ms policy every log.flush.scheduler.interval.ms, the recovery point and log
start offset checkpoints, the high watermark checkpoint, producer-id expiration, and deferred file deletions.
The log cleaner's threads (cleaner.py, log.cleaner.enable) compact the logs of compacted topics. Deleting a partition
aborts its cleaning and renames its directory to <topic>-<partition>.<uuid hex>-delete at once and removes it after
file.delete.delay.ms. Shutdown flushes and closes every log, writes the checkpoints, then the clean-shutdown marker.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Protocol

from wirebroker.log.checkpoints import (
    LOG_START_OFFSET_CHECKPOINT_FILE,
    RECOVERY_POINT_CHECKPOINT_FILE,
    REPLICATION_OFFSET_CHECKPOINT_FILE,
    CorruptCheckpointError,
    read_offset_checkpoint,
    write_offset_checkpoint,
)
from wirebroker.log.cleaner import CleanerConfig, LogCleaner
from wirebroker.log.clock import SYSTEM_CLOCK, Clock
from wirebroker.log.config import LogConfig
from wirebroker.log.files import (
    TopicPartition,
    delete_dir_name,
    parse_delete_dir_name,
    parse_partition_dir_name,
    partition_dir_name,
)
from wirebroker.log.load_progress import LoadProgress, LoadStats
from wirebroker.log.log import Log
from wirebroker.log.metadata_files import (
    MetaProperties,
    delete_clean_shutdown_file,
    has_clean_shutdown_file,
    read_meta_properties,
    uuid_to_kafka_string,
    write_clean_shutdown_file,
    write_meta_properties,
)
from wirebroker.log.scheduler import Scheduler
from wirebroker.protocol.errors import InconsistentClusterIdError, KafkaStorageError

log = logging.getLogger(__name__)

LOCK_FILE = ".lock"
# Broker keys the manager reads, with Kafka's defaults.
MANAGER_DEFAULTS: dict[str, int] = {
    "log.retention.check.interval.ms": 300_000,
    "log.flush.scheduler.interval.ms": 2**63 - 1,
    "log.flush.offset.checkpoint.interval.ms": 60_000,
    "log.flush.start.offset.checkpoint.interval.ms": 60_000,
    "replica.high.watermark.checkpoint.interval.ms": 5_000,
    "producer.id.expiration.ms": 86_400_000,
    "producer.id.expiration.check.interval.ms": 600_000,
    "log.initial.task.delay.ms": 30_000,
}
MAX_SCHEDULED_PERIOD_MS = 2**31  # a period past ~24 days (Kafka's Long.MAX_VALUE default) means "never"


class BrokerSettings(Protocol):
    """What the manager reads of the broker's configuration (wirebroker.config.BrokerConfig, which the log layer does
    not import): the value of a Kafka key, None when unset, KeyError for a key it does not know."""

    def __getitem__(self, key: str, /) -> int | str | None: ...


class LogManager:
    def __init__(self, log_dirs: Sequence[str | os.PathLike[str]], default_config: LogConfig, node_id: int,
                 cluster_id: str | None = None, broker_config: BrokerSettings | None = None,
                 clock: Clock = SYSTEM_CLOCK) -> None:
        self.log_dirs = [os.path.abspath(os.fspath(d)) for d in log_dirs]
        if not self.log_dirs:
            raise ValueError("At least one log directory is needed")
        self.default_config = default_config
        self.node_id = node_id
        self.cluster_id = cluster_id
        self._settings = {key: _setting(broker_config, key, default) for key, default in MANAGER_DEFAULTS.items()}
        self.clock = clock  # retention and producer expiration read it (a virtual one in tests: log/clock.py)
        self.scheduler = Scheduler("wirebroker-log-manager", clock)
        self._logs: dict[TopicPartition, Log] = {}
        self._lock = threading.Lock()
        # Checkpoint files are rewritten through one temporary file each, by the scheduler and by handler threads
        # (a deleted log): one writer at a time, as Kafka's CheckpointFile locks its writes.
        self._checkpoint_lock = threading.Lock()
        self._dir_locks: list[int] = []
        self._started = False
        self.load_stats = LoadStats()  # what start-up loaded (the command's start-up report shows it)
        cleaner_config = CleanerConfig.from_broker(lambda key: _raw_setting(broker_config, key))
        # Kafka's log cleaner (cleaner.py), started after the logs are loaded.
        self.cleaner = LogCleaner(cleaner_config, self.log_dirs, lambda: self.logs) \
            if cleaner_config.enable_cleaner and cleaner_config.num_threads > 0 else None

    # --- start-up ---

    def startup(self) -> None:
        self.scheduler.startup()
        for log_dir in self.log_dirs:
            os.makedirs(log_dir, exist_ok=True)
            self._lock_dir(log_dir)
            self._check_meta_properties(log_dir)
        for log_dir in self.log_dirs:
            self._load_logs(log_dir)
        self._schedule_background_tasks()
        if self.cleaner is not None:
            self.cleaner.startup()
        self._started = True

    def _lock_dir(self, log_dir: str) -> None:
        fd = os.open(os.path.join(log_dir, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise KafkaStorageError(f"Failed to acquire lock on file .lock in {log_dir}. A Kafka instance in another "
                                    f"process or thread is using this directory.") from None
        self._dir_locks.append(fd)

    def _check_meta_properties(self, log_dir: str) -> None:
        meta = read_meta_properties(log_dir)
        if meta is None:
            if self.cluster_id is None:
                self.cluster_id = uuid_to_kafka_string(uuid.uuid4())
            write_meta_properties(log_dir, MetaProperties(self.cluster_id, self.node_id, uuid.uuid4()))
            log.info("Formatted log directory %s for cluster %s, node %d", log_dir, self.cluster_id, self.node_id)
            return
        if meta.node_id != self.node_id:
            raise KafkaStorageError(f"Stored node id {meta.node_id} in {log_dir}/meta.properties doesn't match "
                                    f"configured node id {self.node_id}")
        if self.cluster_id is not None and meta.cluster_id != self.cluster_id:
            raise InconsistentClusterIdError(f"The cluster id {meta.cluster_id} in {log_dir}/meta.properties doesn't "
                                             f"match the configured cluster id {self.cluster_id}")
        self.cluster_id = meta.cluster_id

    def _load_logs(self, log_dir: str) -> None:
        had_clean_shutdown = has_clean_shutdown_file(log_dir)
        recovery_points = _read_checkpoint_or_empty(os.path.join(log_dir, RECOVERY_POINT_CHECKPOINT_FILE))
        log_start_offsets = _read_checkpoint_or_empty(os.path.join(log_dir, LOG_START_OFFSET_CHECKPOINT_FILE))
        high_watermarks = _read_checkpoint_or_empty(os.path.join(log_dir, REPLICATION_OFFSET_CHECKPOINT_FILE))
        # The marker stands for the state at the last shutdown only: drop it before anything can change the logs.
        delete_clean_shutdown_file(log_dir)
        partitions = []
        for name in sorted(os.listdir(log_dir)):
            path = os.path.join(log_dir, name)
            if not os.path.isdir(path):
                continue
            if parse_delete_dir_name(name) is not None:
                self.scheduler.schedule_once(f"delete-log-{name}", lambda p=path: _remove_tree(p))
                continue
            tp = parse_partition_dir_name(name)
            if tp is not None:
                partitions.append((tp, path))
        progress = LoadProgress(log_dir, len(partitions), had_clean_shutdown, self.load_stats)
        for tp, path in partitions:
            log_ = Log.open(path, self.default_config, recovery_point=recovery_points.get(tp, 0),
                            log_start_offset=log_start_offsets.get(tp, 0), scheduler=self.scheduler,
                            had_clean_shutdown=had_clean_shutdown,
                            producer_id_expiration_ms=self._settings["producer.id.expiration.ms"])
            log_.update_high_watermark(high_watermarks.get(tp, log_.log_start_offset))
            with self._lock:
                if tp in self._logs:
                    raise KafkaStorageError(f"Duplicate log directories for {tp} are found in {self._logs[tp].dir} "
                                            f"and {path}")
                self._logs[tp] = log_
            progress.loaded(tp.topic, log_.number_of_segments)
        progress.finished()

    def _schedule_background_tasks(self) -> None:
        delay = self._settings["log.initial.task.delay.ms"]
        tasks: list[tuple[str, Callable[[], None], str]] = [
            ("kafka-log-retention", self.cleanup_logs, "log.retention.check.interval.ms"),
            ("kafka-log-flusher", self.flush_dirty_logs, "log.flush.scheduler.interval.ms"),
            ("kafka-recovery-point-checkpoint", self.checkpoint_recovery_points,
             "log.flush.offset.checkpoint.interval.ms"),
            ("kafka-log-start-offset-checkpoint", self.checkpoint_log_start_offsets,
             "log.flush.start.offset.checkpoint.interval.ms"),
            ("highwatermark-checkpoint", self.checkpoint_high_watermarks,
             "replica.high.watermark.checkpoint.interval.ms"),
            ("producer-expiration", self.remove_expired_producers, "producer.id.expiration.check.interval.ms"),
        ]
        for name, task, key in tasks:
            period = self._settings[key]
            if 0 < period < MAX_SCHEDULED_PERIOD_MS:
                self.scheduler.schedule(name, task, delay, period)

    # --- logs ---

    @property
    def logs(self) -> dict[TopicPartition, Log]:
        with self._lock:
            return dict(self._logs)

    def get_log(self, topic: str, partition: int) -> Log | None:
        return self._logs.get(TopicPartition(topic, partition))

    def get_or_create_log(self, topic: str, partition: int, topic_id: uuid.UUID | bytes | None = None,
                          config: LogConfig | None = None) -> Log:
        """The partition's log, created in the log dir with the fewest partitions if it does not exist.

        An existing log takes `config` (the topic's current configuration) and must carry the same topic id."""
        tp = TopicPartition(topic, partition)
        topic_uuid = _as_uuid(topic_id)
        with self._lock:
            existing = self._logs.get(tp)
            if existing is not None:
                if config is not None:
                    existing.update_config(config)
                if topic_uuid is not None and existing.topic_id is None:
                    existing.topic_id = topic_uuid
                return existing
            log_dir = self._next_log_dir()
            log_ = Log.open(os.path.join(log_dir, partition_dir_name(tp)), config or self.default_config,
                            topic_id=topic_uuid, scheduler=self.scheduler,
                            producer_id_expiration_ms=self._settings["producer.id.expiration.ms"])
            self._logs[tp] = log_
            log.info("Created log for partition %s in %s", tp, log_.dir)
            return log_

    def _next_log_dir(self) -> str:
        counts = {d: 0 for d in self.log_dirs}
        for log_ in self._logs.values():
            parent = os.path.dirname(log_.dir)
            if parent in counts:
                counts[parent] += 1
        return min(self.log_dirs, key=lambda d: counts[d])

    def delete_log(self, topic: str, partition: int) -> Log | None:
        """Stop serving the partition's log now and remove its files later (asynchronous, as Kafka)."""
        tp = TopicPartition(topic, partition)
        with self._lock:
            removed = self._logs.pop(tp, None)
        if removed is None:
            return None
        if self.cleaner is not None:
            self.cleaner.abort_cleaning(tp)
            self.cleaner.remove_checkpoint(os.path.dirname(removed.dir), tp)
        removed.rename_dir(delete_dir_name(tp))
        self.scheduler.schedule_once(f"delete-log-{tp}", removed.delete, removed.config.file_delete_delay_ms)
        log.info("Log for partition %s is renamed to %s and is scheduled for deletion", tp, removed.dir)
        self._write_checkpoints_of(os.path.dirname(removed.dir))
        return removed

    # --- background work ---

    def cleanup_logs(self) -> int:
        """Retention for every log; the number of segments deleted."""
        now = self.clock.time_ms()
        deleted = 0
        for log_ in self.logs.values():
            try:
                deleted += log_.delete_old_segments(now)
            except Exception:
                log.exception("Retention of %s failed; it will be retried at the next check", log_.name)
        return deleted

    def flush_dirty_logs(self) -> None:
        now = self.clock.time_ms()
        for log_ in self.logs.values():
            log_.flush_if_due(now)

    def remove_expired_producers(self) -> None:
        now = self.clock.time_ms()
        for log_ in self.logs.values():
            log_.remove_expired_producers(now)

    def checkpoint_recovery_points(self) -> None:
        self._checkpoint(RECOVERY_POINT_CHECKPOINT_FILE, lambda log_: log_.recovery_point)

    def checkpoint_log_start_offsets(self) -> None:
        self._checkpoint(LOG_START_OFFSET_CHECKPOINT_FILE, lambda log_: log_.log_start_offset)

    def checkpoint_high_watermarks(self) -> None:
        self._checkpoint(REPLICATION_OFFSET_CHECKPOINT_FILE, lambda log_: log_.high_watermark)

    def _checkpoint(self, file_name: str, value: Callable[[Log], int]) -> None:
        with self._checkpoint_lock:
            logs = self.logs
            for log_dir in self.log_dirs:
                offsets = {tp: value(log_) for tp, log_ in logs.items() if os.path.dirname(log_.dir) == log_dir}
                write_offset_checkpoint(os.path.join(log_dir, file_name), offsets)

    def _write_checkpoints_of(self, log_dir: str) -> None:
        if log_dir in self.log_dirs:
            self.checkpoint_recovery_points()
            self.checkpoint_log_start_offsets()
            self.checkpoint_high_watermarks()

    # --- shutdown ---

    def shutdown(self) -> None:
        """Flush and close every log, write the checkpoints and the clean-shutdown marker, release the dirs."""
        if not self._started:
            return
        self._started = False
        if self.cleaner is not None:
            self.cleaner.shutdown()
        self.scheduler.shutdown()
        clean = True
        for log_ in self.logs.values():
            try:
                log_.close()
            except Exception:
                clean = False
                log.exception("Failed to close log %s; the next start will recover it", log_.name)
        self.checkpoint_recovery_points()
        self.checkpoint_log_start_offsets()
        self.checkpoint_high_watermarks()
        if clean:
            for log_dir in self.log_dirs:
                write_clean_shutdown_file(log_dir)
        for fd in self._dir_locks:
            os.close(fd)
        self._dir_locks.clear()
        log.info("Log manager shut down %s", "cleanly" if clean else "with errors")


def _setting(broker_config: BrokerSettings | None, key: str, default: int) -> int:
    value = _raw_setting(broker_config, key)
    return default if value is None else int(value)


def _raw_setting(broker_config: BrokerSettings | None, key: str) -> int | str | None:
    """The key's value, None when unset or unknown to the broker config."""
    if broker_config is None:
        return None
    try:
        return broker_config[key]
    except KeyError:
        return None


def _read_checkpoint_or_empty(path: str) -> dict[TopicPartition, int]:
    try:
        return read_offset_checkpoint(path)
    except CorruptCheckpointError as exc:
        log.warning("Resetting to no entries (full recovery) after failing to read %s: %s", path, exc)
        return {}


def _as_uuid(topic_id: uuid.UUID | bytes | None) -> uuid.UUID | None:
    if topic_id is None or isinstance(topic_id, uuid.UUID):
        return topic_id
    if len(topic_id) != 16:
        raise ValueError(f"A topic id has 16 bytes, got {len(topic_id)}")
    return None if topic_id == bytes(16) else uuid.UUID(bytes=bytes(topic_id))


def _remove_tree(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)
    log.info("Deleted log directory %s", path)
