"""A partition leader's view of its followers: ISR changes proposed to the controller, the high watermark,
acks=all and min.insync.replicas (Kafka's Partition), on a real log."""

from __future__ import annotations

import pytest

from tests.unit.log.helpers import small_config
from wirebroker.log.log import Log
from wirebroker.protocol.errors import (
    ErrorCode,
    NotEnoughReplicasError,
    NotLeaderOrFollowerError,
)
from wirebroker.protocol.records import build_batch
from wirebroker.replica import partition as partition_module
from wirebroker.replica.partition import LeaderAndIsr, Partition

LAG_MS = 1000


class Controller:
    """An AlterPartition sender that records proposals; the test answers them."""

    def __init__(self) -> None:
        self.proposals: list[tuple[Partition, tuple[int, ...]]] = []

    def submit(self, partition: Partition, proposed_isr: tuple[int, ...]) -> None:
        self.proposals.append((partition, proposed_isr))

    def accept_last(self) -> None:
        partition, proposed = self.proposals[-1]
        partition.on_alter_partition_response(proposed, ErrorCode.NONE, LeaderAndIsr(
            partition.local_broker_id, partition.leader_epoch, proposed, partition.partition_epoch + 1))


@pytest.fixture
def clock(monkeypatch):
    now = [1_000_000]
    monkeypatch.setattr(partition_module, "_now_ms", lambda: now[0])
    return now


@pytest.fixture
def leader(tmp_path, clock):
    log_ = Log.open(str(tmp_path / "topic-0"), small_config(min_insync_replicas="2"))
    controller = Controller()
    changes = []
    partition = Partition("topic", 0, bytes(16), log_, local_broker_id=1, replica_lag_time_max_ms=LAG_MS,
                          alter_partition=controller, on_state_change=changes.append)
    partition.make_leader(LeaderAndIsr(1, 5, (1, 2, 3), 7, (1, 2, 3)))
    partition.controller, partition.changes = controller, changes
    yield partition
    log_.close()


def append(partition: Partition, acks: int = -1) -> int:
    info = partition.append_records_as_leader(memoryview(bytearray(build_batch([(0, None, b"v", ())]))), acks)
    return info.last_offset + 1


def test_the_high_watermark_is_the_smallest_log_end_offset_of_the_isr(leader):
    required = append(leader)
    assert (leader.high_watermark, leader.log_end_offset) == (0, 1)
    assert leader.check_enough_replicas_reach_offset(required) == (False, ErrorCode.NONE)
    leader.update_follower_fetch_state(2, 1)
    assert leader.high_watermark == 0  # follower 3 has not fetched
    leader.update_follower_fetch_state(3, 1)
    assert leader.high_watermark == 1
    assert leader.check_enough_replicas_reach_offset(required) == (True, ErrorCode.NONE)
    leader.update_follower_fetch_state(3, 0)  # an older fetch never moves it back
    assert leader.high_watermark == 1


def test_a_lagging_follower_is_proposed_out_and_the_answer_commits_the_isr(leader, clock):
    append(leader)
    leader.update_follower_fetch_state(2, 1)
    clock[0] += LAG_MS + 1
    leader.maybe_shrink_isr()
    assert [isr for _, isr in leader.controller.proposals] == [(1, 2)]
    assert leader.isr == (1, 2, 3) and leader.high_watermark == 0  # the maximal ISR still holds it back
    leader.maybe_shrink_isr()
    assert len(leader.controller.proposals) == 1  # one proposal in flight at a time
    leader.controller.accept_last()
    assert (leader.isr, leader.partition_epoch, leader.high_watermark) == ((1, 2), 8, 1)


def test_a_follower_that_reaches_the_high_watermark_is_proposed_back(leader, clock):
    leader.on_alter_partition_response((1,), ErrorCode.NONE, LeaderAndIsr(1, 5, (1,), 8))  # never proposed: ignored
    assert leader.isr == (1, 2, 3)
    append(leader)
    leader.update_follower_fetch_state(3, 1)  # at the leader's log end: caught up however long ago
    clock[0] += LAG_MS + 1
    leader.maybe_shrink_isr()
    leader.controller.accept_last()
    assert leader.isr == (1, 3)  # 2 never fetched
    leader.update_follower_fetch_state(2, 1)
    assert leader.controller.proposals[-1][1] == (1, 3, 2)


def test_min_insync_replicas_refuses_acks_all_before_and_after_the_append(leader, clock):
    required = append(leader)
    clock[0] += LAG_MS + 1
    leader.maybe_shrink_isr()
    leader.controller.accept_last()
    assert leader.isr == (1,) and leader.high_watermark == 1
    assert leader.check_enough_replicas_reach_offset(required) == (True, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND)
    with pytest.raises(NotEnoughReplicasError):
        append(leader)
    append(leader, acks=1)


def test_a_refused_proposal_keeps_the_committed_isr(leader, clock):
    append(leader)
    clock[0] += LAG_MS + 1
    leader.maybe_shrink_isr()
    partition, proposed = leader.controller.proposals[-1]
    partition.on_alter_partition_response(proposed, ErrorCode.INVALID_UPDATE_VERSION, None)
    assert leader.isr == (1, 2, 3) and leader.pending_isr is None and leader.partition_epoch == 7


def test_a_follower_refuses_appends_and_waiting_produce_requests_learn_it(leader):
    required = append(leader)
    leader.make_follower(LeaderAndIsr(2, 6, (2, 3), 8, (1, 2, 3)))
    assert leader.check_enough_replicas_reach_offset(required) == (False, ErrorCode.NOT_LEADER_OR_FOLLOWER)
    assert leader.changes[-1] is leader  # the purgatories are told
    with pytest.raises(NotLeaderOrFollowerError):
        append(leader)
    with pytest.raises(NotLeaderOrFollowerError):
        leader.update_follower_fetch_state(2, 1)


def test_a_new_leader_starts_its_epoch_at_its_log_end(leader):
    append(leader)
    leader.make_follower(LeaderAndIsr(2, 6, (1, 2, 3), 8, (1, 2, 3)))
    leader.make_leader(LeaderAndIsr(1, 7, (1, 2, 3), 9, (1, 2, 3)))
    assert leader.log.end_offset_for_epoch(5) == (1, 5)
    assert leader.log.end_offset_for_epoch(7) == (1, 7)
    assert leader.leader_epoch_start_offset == 1


def test_a_partition_that_leaves_the_broker_answers_its_waiting_produce_requests(leader):
    required = append(leader)
    leader.stop_hosting()
    assert leader.check_enough_replicas_reach_offset(required) == (False, ErrorCode.NOT_LEADER_OR_FOLLOWER)
    assert leader.changes[-1] is leader


@pytest.mark.parametrize("broker_3_alive, high_watermark", [(False, 2), (True, 1)])
def test_a_caught_up_follower_outside_the_isr_holds_the_high_watermark_only_while_alive(
        tmp_path, clock, broker_3_alive, high_watermark):
    alive = {1, 2, 3}
    log_ = Log.open(str(tmp_path / "topic-0"), small_config())
    partition = Partition("topic", 0, bytes(16), log_, local_broker_id=1, replica_lag_time_max_ms=LAG_MS,
                          alter_partition=Controller(), is_broker_alive=alive.__contains__)
    partition.make_leader(LeaderAndIsr(1, 5, (1, 2, 3), 7, (1, 2, 3)))
    append(partition)
    partition.update_follower_fetch_state(2, 1)
    partition.update_follower_fetch_state(3, 1)
    # Broker 3 leaves right after its fetch; the controller takes it out of the ISR at the next epoch, and this
    # broker stays leader (Kafka keeps a staying leader's follower states).
    if not broker_3_alive:
        alive.discard(3)
    partition.make_leader(LeaderAndIsr(1, 6, (1, 2), 8, (1, 2, 3)))
    append(partition)
    partition.update_follower_fetch_state(2, 2)
    assert partition.high_watermark == high_watermark
    log_.close()
