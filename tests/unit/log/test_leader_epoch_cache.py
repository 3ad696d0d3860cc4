from wirebroker.log.checkpoints import EpochEntry, read_leader_epoch_checkpoint
from wirebroker.log.leader_epoch_cache import LeaderEpochFileCache


def test_assign_persists_and_reloads(tmp_path):
    cache = LeaderEpochFileCache(str(tmp_path))
    cache.assign(0, 0)
    cache.assign(0, 5)  # same epoch, later offset: nothing new
    cache.assign(2, 10)
    cache.assign(5, 30)
    assert cache.epoch_entries() == [EpochEntry(0, 0), EpochEntry(2, 10), EpochEntry(5, 30)]
    assert read_leader_epoch_checkpoint(cache.path) == cache.epoch_entries()
    assert LeaderEpochFileCache(str(tmp_path)).epoch_entries() == cache.epoch_entries()
    assert cache.latest_epoch == 5


def test_a_conflicting_assignment_drops_later_entries(tmp_path):
    cache = LeaderEpochFileCache(str(tmp_path))
    for epoch, offset in [(0, 0), (2, 10), (5, 30)]:
        cache.assign(epoch, offset)
    cache.assign(3, 20)  # epoch 5 started after 20 and is older-numbered history now gone
    assert cache.epoch_entries() == [EpochEntry(0, 0), EpochEntry(2, 10), EpochEntry(3, 20)]


def test_end_offset_for(tmp_path):
    cache = LeaderEpochFileCache(str(tmp_path))
    assert cache.end_offset_for(0, 100) == (-1, -1)
    for epoch, offset in [(1, 0), (3, 10), (6, 30)]:
        cache.assign(epoch, offset)
    assert cache.end_offset_for(6, 100) == (6, 100)  # the current epoch ends at the log end
    assert cache.end_offset_for(3, 100) == (3, 30)
    assert cache.end_offset_for(4, 100) == (3, 30)  # unknown epoch between: the largest below it
    assert cache.end_offset_for(0, 100) == (0, 0)  # older than everything: the first start offset
    assert cache.end_offset_for(9, 100) == (-1, -1)
    assert cache.end_offset_for(-1, 100) == (-1, -1)


def test_truncations_and_epoch_for_offset(tmp_path):
    cache = LeaderEpochFileCache(str(tmp_path))
    for epoch, offset in [(1, 0), (3, 10), (6, 30)]:
        cache.assign(epoch, offset)
    assert [cache.epoch_for_offset(o) for o in (0, 9, 10, 29, 31)] == [1, 1, 3, 3, 6]
    cache.truncate_from_start(15)
    assert cache.epoch_entries() == [EpochEntry(3, 15), EpochEntry(6, 30)]
    cache.truncate_from_end(30)
    assert cache.epoch_entries() == [EpochEntry(3, 15)]
    assert read_leader_epoch_checkpoint(cache.path) == [EpochEntry(3, 15)]
    assert cache.epoch_for_offset(14) is None


def test_corrupt_checkpoint_is_ignored(tmp_path):
    (tmp_path / "leader-epoch-checkpoint").write_text("0\n5\n1 0\n")
    assert LeaderEpochFileCache(str(tmp_path)).epoch_entries() == []


def test_a_reload_of_an_empty_log_that_becomes_leader_again_rewrites_nothing(tmp_path):
    """The loader truncates the entry of an empty log in memory only; the leader's re-assignment restores what the
    file holds, so a start with many empty partitions costs no fsync per partition (KAFKA-15046)."""
    LeaderEpochFileCache(str(tmp_path)).assign(3, 0)
    checkpoint = tmp_path / "leader-epoch-checkpoint"
    written_at = checkpoint.stat().st_mtime_ns
    reloaded = LeaderEpochFileCache(str(tmp_path))
    reloaded.truncate_from_end(0, write=False)
    assert reloaded.epoch_entries() == [] and read_leader_epoch_checkpoint(reloaded.path) == [EpochEntry(3, 0)]
    reloaded.assign(3, 0)
    assert checkpoint.stat().st_mtime_ns == written_at
    reloaded.assign(4, 0)  # a new epoch is written at once
    assert read_leader_epoch_checkpoint(reloaded.path) == [EpochEntry(4, 0)]
