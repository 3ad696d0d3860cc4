"""The controller's checks of a leader's AlterPartition, in Kafka's order (processAlterPartition), without ZooKeeper."""

from __future__ import annotations

from dataclasses import replace

from wirebroker.cluster.zk.isr_change import check_isr_change
from wirebroker.cluster.zk.controller_state import ControllerState
from wirebroker.cluster.zk.data import BrokerInfo, LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment
from wirebroker.log.files import TopicPartition
from wirebroker.protocol.errors import (
    FencedLeaderEpochError,
    IneligibleReplicaError,
    InvalidRequestError,
    InvalidUpdateVersionError,
    NotControllerError,
    NotLeaderOrFollowerError,
    UnknownTopicOrPartitionError,
)

T0 = TopicPartition("t", 0)
CURRENT = LeaderAndIsr(1, 4, (1, 2, 3), partition_epoch=7)


def controller(live=(1, 2, 3, 4), replicas=(1, 2, 3)) -> ControllerState:
    return ControllerState(1, 5, 5, {b: BrokerInfo(b, ()) for b in live}, {T0: ReplicaAssignment(replicas)},
                           {T0: LeaderIsrAndControllerEpoch(CURRENT, 5)})


def proposal(**changes) -> LeaderAndIsr:
    return replace(LeaderAndIsr(1, 4, (1, 2), partition_epoch=7), **changes)


def test_a_shrink_based_on_the_current_state_is_written():
    assert check_isr_change(controller(), T0, 1, proposal()) is None


def test_an_unknown_partition_is_refused():
    assert isinstance(check_isr_change(controller(), TopicPartition("t", 9), 1, proposal()),
                      UnknownTopicOrPartitionError)


def test_an_older_leader_epoch_is_fenced():
    assert isinstance(check_isr_change(controller(), T0, 1, proposal(leader_epoch=3)), FencedLeaderEpochError)


def test_a_state_newer_than_the_controllers_means_this_one_is_stale():
    assert isinstance(check_isr_change(controller(), T0, 1, proposal(partition_epoch=8)), NotControllerError)
    assert isinstance(check_isr_change(controller(), T0, 1, proposal(leader_epoch=5)), NotControllerError)


def test_only_the_leader_may_change_the_isr():
    assert isinstance(check_isr_change(controller(), T0, 2, proposal()), NotLeaderOrFollowerError)


def test_a_retry_of_what_is_written_answers_the_current_state():
    assert check_isr_change(controller(), T0, 1, proposal(isr=(1, 2, 3))) == CURRENT
    # even with the partition epoch the retry was based on (Kafka checks this before the partition epoch)
    assert check_isr_change(controller(), T0, 1, proposal(isr=(1, 2, 3), partition_epoch=6)) == CURRENT


def test_an_older_partition_epoch_is_an_invalid_update_version():
    assert isinstance(check_isr_change(controller(), T0, 1, proposal(partition_epoch=6)), InvalidUpdateVersionError)


def test_a_recovered_leader_cannot_go_back_to_recovering():
    assert isinstance(check_isr_change(controller(), T0, 1, proposal(leader_recovery_state=1)), InvalidRequestError)


def test_dead_shutting_down_or_unassigned_replicas_are_ineligible():
    assert isinstance(check_isr_change(controller(live=(1, 2)), T0, 1, proposal(isr=(1, 3))),
                      IneligibleReplicaError)
    shutting_down = controller()
    shutting_down.shutting_down_brokers.add(3)
    assert isinstance(check_isr_change(shutting_down, T0, 1, proposal(isr=(1, 3))), IneligibleReplicaError)
    assert isinstance(check_isr_change(controller(), T0, 1, proposal(isr=(1, 4))), IneligibleReplicaError)
