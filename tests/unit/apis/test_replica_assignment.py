"""Manual replica assignments are refused with Kafka's messages."""

from __future__ import annotations

import pytest

from wirebroker.apis.replica_assignment import check_manual_assignment
from wirebroker.protocol.errors import InvalidReplicaAssignmentError


@pytest.mark.parametrize(("broker_ids", "previous", "message"), [
    ([], None, "The manual partition assignment includes an empty replica list."),
    ([9, 1, 7], None, "The manual partition assignment includes broker 7, but no such broker is registered."),
    ([1, 1], None, "The manual partition assignment includes the broker 1 more than once."),
    ([1], 2, "The manual partition assignment includes a partition with 1 replica(s), but this is not consistent "
              "with previous partitions, which have 2 replica(s)."),
])
def test_bad_assignments(broker_ids, previous, message):
    with pytest.raises(InvalidReplicaAssignmentError) as raised:
        check_manual_assignment(broker_ids, (1, 9), previous)
    assert str(raised.value) == message


def test_good_assignment_passes():
    check_manual_assignment([1], (1,), 1)
    check_manual_assignment([1], (1,), None)
