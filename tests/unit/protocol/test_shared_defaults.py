"""A struct-valued default that holds only numbers and strings is one shared read-only instance (message.shared_default):
decoding a Fetch partition without the tagged structs, or constructing one, builds none of them."""

import copy
import pickle

import pytest

from wirebroker.protocol.messages.fetch import FetchResponse


def _partition(**fields) -> FetchResponse.PartitionData:
    return FetchResponse.PartitionData(partition_index=0, records=b"r", **fields)


def _wire(partition: FetchResponse.PartitionData) -> bytes:
    return FetchResponse(responses=[FetchResponse.FetchableTopicResponse(topic="t", partitions=[partition])]).encode(12)


def test_absent_tagged_structs_are_the_shared_default_and_equal_a_fresh_one():
    built = _partition()
    decoded = FetchResponse.decode(_wire(built), 12).responses[0].partitions[0]
    assert decoded.current_leader is built.current_leader  # neither decoding nor __init__ built one
    assert decoded.current_leader == FetchResponse.LeaderIdAndEpoch()
    assert FetchResponse.LeaderIdAndEpoch() == decoded.current_leader
    assert repr(decoded.current_leader) == repr(FetchResponse.LeaderIdAndEpoch())
    assert decoded == built


def test_the_shared_default_cannot_be_changed_in_place():
    shared = _partition().current_leader
    with pytest.raises(AttributeError, match="shared default"):
        shared.leader_id = 3
    assert shared.leader_id == -1
    assert copy.copy(shared) is shared and copy.deepcopy(shared) is shared
    restored = pickle.loads(pickle.dumps(shared))
    assert restored == shared and type(restored) is FetchResponse.LeaderIdAndEpoch
    restored.leader_id = 3  # a fresh one again


def test_a_tagged_struct_set_to_its_default_values_is_not_written():
    assert _wire(_partition(current_leader=FetchResponse.LeaderIdAndEpoch())) == _wire(_partition())
    leader = FetchResponse.LeaderIdAndEpoch(leader_id=2, leader_epoch=5)
    decoded = FetchResponse.decode(_wire(_partition(current_leader=leader)), 12).responses[0].partitions[0]
    assert decoded.current_leader == leader and decoded.diverging_epoch is _partition().diverging_epoch
