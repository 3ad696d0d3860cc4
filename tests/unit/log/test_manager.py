import os
import shutil
import threading
import uuid

import pytest

from wirebroker.log.checkpoints import read_offset_checkpoint
from wirebroker.log.files import TopicPartition
from wirebroker.log.log import Log
from wirebroker.log.manager import LogManager
from wirebroker.log.metadata_files import read_meta_properties, read_partition_metadata
from wirebroker.protocol.errors import (
    InconsistentClusterIdError,
    InconsistentTopicIdError,
    KafkaStorageError,
)

from .helpers import NOW, append_batches, small_config

TOPIC_ID = uuid.UUID(int=7)


@pytest.fixture
def dirs(tmp_path):
    return [str(tmp_path / "d1"), str(tmp_path / "d2")]


@pytest.fixture
def managers():
    started: list[LogManager] = []

    def _start(log_dirs, **kwargs):
        manager = LogManager(log_dirs, small_config(), node_id=1, **kwargs)
        manager.startup()
        started.append(manager)
        return manager

    yield _start
    for manager in started:
        manager.shutdown()


def test_startup_formats_dirs_and_spreads_logs(dirs, managers):
    manager = managers(dirs, cluster_id="test-cluster")
    for d in dirs:
        meta = read_meta_properties(d)
        assert (meta.cluster_id, meta.node_id) == ("test-cluster", 1)
    a = manager.get_or_create_log("orders", 0, TOPIC_ID)
    b = manager.get_or_create_log("orders", 1, TOPIC_ID.bytes)
    assert {os.path.dirname(a.dir), os.path.dirname(b.dir)} == set(dirs)
    assert manager.get_or_create_log("orders", 0) is a
    assert read_partition_metadata(b.dir) == TOPIC_ID
    assert manager.get_log("orders", 5) is None


def test_shutdown_writes_checkpoints_and_marker_and_restart_skips_recovery(dirs, managers):
    manager = managers(dirs[:1], cluster_id="c")
    log_ = manager.get_or_create_log("t", 0, TOPIC_ID)
    append_batches(log_, 10)
    log_.increment_log_start_offset(3)
    manager.shutdown()
    d = dirs[0]
    tp = TopicPartition("t", 0)
    assert read_offset_checkpoint(os.path.join(d, "recovery-point-offset-checkpoint")) == {tp: 10}
    assert read_offset_checkpoint(os.path.join(d, "log-start-offset-checkpoint")) == {tp: 3}
    assert read_offset_checkpoint(os.path.join(d, "replication-offset-checkpoint")) == {tp: 10}
    assert os.path.exists(os.path.join(d, ".kafka_cleanshutdown"))

    restarted = managers(dirs[:1])
    assert restarted.cluster_id == "c"
    assert not os.path.exists(os.path.join(d, ".kafka_cleanshutdown"))  # until the next clean shutdown
    reloaded = restarted.get_log("t", 0)
    assert (reloaded.log_start_offset, reloaded.log_end_offset, reloaded.high_watermark) == (3, 10, 10)
    assert reloaded.topic_id == TOPIC_ID


def test_restart_after_a_crash_recovers_from_the_checkpoint(tmp_path, dirs, managers):
    manager = managers(dirs[:1])
    log_ = manager.get_or_create_log("t", 0)
    append_batches(log_, 10)
    manager.checkpoint_recovery_points()  # recovery point 0: nothing flushed yet
    # What a crash leaves: the files as they are now, no clean-shutdown marker, and then a torn write.
    crashed = str(tmp_path / "crashed")
    shutil.copytree(dirs[0], crashed)
    with open(os.path.join(crashed, "t-0", os.path.basename(log_.segments.last.log.path)), "ab") as f:
        f.write(b"torn write")
    restarted = managers([crashed])
    recovered = restarted.get_log("t", 0)
    assert recovered.log_end_offset == 10
    assert os.path.getsize(recovered.segments.last.log.path) == log_.segments.last.size


def test_a_second_manager_cannot_use_a_locked_dir(dirs, managers):
    managers(dirs[:1])
    with pytest.raises(KafkaStorageError):
        LogManager(dirs[:1], small_config(), node_id=1).startup()


def test_mismatched_cluster_or_node_is_refused(dirs, managers):
    managers(dirs[:1], cluster_id="one").shutdown()
    with pytest.raises(InconsistentClusterIdError):
        LogManager(dirs[:1], small_config(), node_id=1, cluster_id="two").startup()
    with pytest.raises(KafkaStorageError):
        LogManager(dirs[:1], small_config(), node_id=2).startup()


def test_delete_log_renames_then_removes(dirs, managers):
    manager = managers(dirs[:1])
    log_ = manager.get_or_create_log("gone", 2, TOPIC_ID, small_config(file_delete_delay_ms="0"))
    append_batches(log_, 3)
    manager.delete_log("gone", 2)
    assert manager.get_log("gone", 2) is None
    manager.scheduler.shutdown()  # runs the pending removal now
    assert not [n for n in os.listdir(dirs[0]) if n.startswith("gone-2")]
    assert TopicPartition("gone", 2) not in read_offset_checkpoint(
        os.path.join(dirs[0], "recovery-point-offset-checkpoint"))


def test_checkpoints_written_from_many_threads_at_once_all_land(dirs, managers):
    """The scheduler's checkpoint tasks and handler threads deleting logs write the same files at the same time."""
    manager = managers(dirs[:1])
    for index in range(20):
        append_batches(manager.get_or_create_log("t", index, TOPIC_ID), 2)
    failures: list[BaseException] = []

    def write_repeatedly(write) -> None:
        try:
            for _ in range(100):
                write()
        except BaseException as exc:  # noqa: BLE001 - the test reports whatever a writer hit
            failures.append(exc)

    writers = [threading.Thread(target=write_repeatedly, args=(manager.checkpoint_high_watermarks,)) for _ in range(2)]
    writers.append(threading.Thread(target=write_repeatedly, args=(lambda: manager.delete_log("t", 0),)))
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert failures == []
    entries = read_offset_checkpoint(os.path.join(dirs[0], "replication-offset-checkpoint"))
    assert entries == {TopicPartition("t", i): 2 for i in range(1, 20)}


def test_topic_id_mismatch_on_disk_is_refused(dirs, managers):
    manager = managers(dirs[:1])
    manager.get_or_create_log("t", 0, TOPIC_ID)
    manager.shutdown()
    path = os.path.join(dirs[0], "t-0")
    with pytest.raises(InconsistentTopicIdError):
        Log.open(path, small_config(), topic_id=uuid.UUID(int=8), now_ms=NOW)


def test_cleanup_logs_applies_retention(dirs, managers):
    manager = managers(dirs[:1])
    log_ = manager.get_or_create_log("t", 0, config=small_config(internal_segment_bytes="1000", retention_ms="1000"))
    append_batches(log_, 30, timestamp=NOW)
    assert manager.cleanup_logs() > 0
    assert log_.log_start_offset > 0
