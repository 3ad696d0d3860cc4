"""Which producer's transaction a produce request carries (Kafka's handleProduceAppend): the transactional batches'
producer id and epoch, none for idempotent or plain batches, and INVALID_PRODUCER_ID_MAPPING for two producers."""

from __future__ import annotations

import pytest

from wirebroker.protocol import records
from wirebroker.protocol.errors import InvalidProducerIdMappingError
from wirebroker.replica.txn_verification import transactional_producer


def batch(producer_id: int = -1, epoch: int = -1, transactional: bool = False) -> bytes:
    return records.build_batch([(0, None, b"v", ())], producer_id=producer_id, producer_epoch=epoch,
                               base_sequence=0 if producer_id >= 0 else -1, is_transactional=transactional)


def test_the_transactional_batches_name_the_producer():
    assert transactional_producer([batch(), batch(7, 3, transactional=True), None, b"short"]) == (7, 3)
    assert transactional_producer([batch(7, 3, transactional=True), batch(7, 3, transactional=True)]) == (7, 3)


def test_idempotent_and_plain_batches_name_none():
    assert transactional_producer([batch(), batch(7, 3)]) is None


@pytest.mark.parametrize("other", [(8, 3), (7, 4)])
def test_two_producers_in_one_request_are_refused(other):
    with pytest.raises(InvalidProducerIdMappingError):
        transactional_producer([batch(7, 3, transactional=True), batch(*other, transactional=True)])
