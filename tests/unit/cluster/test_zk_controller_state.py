"""The controller's decisions per event, without ZooKeeper: what each partition's next LeaderAndIsr is."""

from __future__ import annotations

from wirebroker.cluster.zk.controller_state import ControllerState
from wirebroker.cluster.zk.data import (
    NO_LEADER,
    BrokerInfo,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
)
from wirebroker.log.files import TopicPartition
from wirebroker.protocol.errors import (
    ElectionNotNeededError,
    EligibleLeadersNotAvailableError,
    PreferredLeaderNotAvailableError,
)

T0 = TopicPartition("t", 0)
LED_BY_1 = LeaderAndIsr(1, 4, (1, 2, 3))


def state(replicas=(1, 2, 3), current=LED_BY_1, live=(1, 2, 3),
          unclean=False) -> ControllerState:
    return ControllerState(
        controller_id=1, epoch=2, epoch_zk_version=1,
        live_brokers={b: BrokerInfo(b, ()) for b in live},
        assignments={T0: ReplicaAssignment(tuple(replicas))},
        partition_states={T0: LeaderIsrAndControllerEpoch(current, 2)},
        unclean_leader_election_enable=lambda topic: unclean,
    )


def test_leader_failure_elects_the_next_isr_member():
    controller = state(live=(2, 3))
    decision = controller.decide_after_broker_failure(T0, LeaderAndIsr(1, 4, (1, 2, 3)), {1})
    assert decision == LeaderAndIsr(2, 5, (2, 3))


def test_follower_failure_shrinks_the_isr_and_keeps_the_leader():
    controller = state(live=(1, 2))
    assert controller.decide_after_broker_failure(T0, LeaderAndIsr(1, 4, (1, 2, 3)), {3}) == LeaderAndIsr(1, 5, (1, 2))


def test_failure_of_the_last_isr_member_leaves_the_partition_offline_with_that_member():
    controller = state(live=(2, 3))
    decision = controller.decide_after_broker_failure(T0, LeaderAndIsr(1, 4, (1,)), {1})
    assert decision == LeaderAndIsr(NO_LEADER, 5, (1,))


def test_unclean_election_takes_a_live_out_of_sync_replica():
    controller = state(live=(2, 3), unclean=True)
    decision = controller.decide_after_broker_failure(T0, LeaderAndIsr(1, 4, (1,)), {1})
    assert (decision.leader, decision.leader_epoch, decision.isr) == (2, 5, (2,))


def test_unrelated_broker_failure_changes_nothing():
    controller = state(replicas=(1, 2), live=(1, 2))
    assert controller.decide_after_broker_failure(T0, LeaderAndIsr(1, 4, (1, 2)), {5}) is None


def test_returning_isr_member_takes_the_lead_of_an_offline_partition():
    controller = state(live=(1, 2, 3))
    assert controller.decide_offline_election(T0, LeaderAndIsr(NO_LEADER, 5, (1,))) == LeaderAndIsr(1, 6, (1,))
    still_offline = state(live=(2, 3))
    assert isinstance(still_offline.decide_offline_election(T0, LeaderAndIsr(NO_LEADER, 5, (1,))),
                      EligibleLeadersNotAvailableError)
    assert controller.decide_offline_election(T0, LeaderAndIsr(2, 5, (2,))) is None


def test_controlled_shutdown_moves_leadership_and_leaves_the_isr():
    controller = state()
    controller.shutting_down_brokers.add(1)
    assert controller.decide_controlled_shutdown(T0, LeaderAndIsr(1, 4, (1, 2, 3)), 1) == LeaderAndIsr(2, 5, (2, 3))
    controller.shutting_down_brokers = {3}
    assert controller.decide_controlled_shutdown(T0, LeaderAndIsr(1, 4, (1, 2, 3)), 3) == LeaderAndIsr(1, 5, (1, 2))
    controller.shutting_down_brokers = {1}
    assert isinstance(controller.decide_controlled_shutdown(T0, LeaderAndIsr(1, 4, (1,)), 1),
                      EligibleLeadersNotAvailableError)


def test_preferred_election():
    controller = state()
    assert controller.decide_preferred_election(T0, LeaderAndIsr(2, 4, (1, 2, 3))) == LeaderAndIsr(1, 5, (1, 2, 3))
    assert isinstance(controller.decide_preferred_election(T0, LeaderAndIsr(1, 4, (1, 2))), ElectionNotNeededError)
    assert isinstance(controller.decide_preferred_election(T0, LeaderAndIsr(2, 4, (2, 3))),
                      PreferredLeaderNotAvailableError)


def test_queries():
    controller = state(current=LeaderAndIsr(3, 1, (3,)), live=(1, 2))
    assert controller.offline_partitions() == [T0]
    assert controller.partitions_led_by(3) == [T0]
    assert [b.broker_id for b in controller.broker_metadatas()] == [1, 2]
