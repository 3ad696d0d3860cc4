"""The transaction APIs at the wire, version by version (raw requests): AddPartitionsToTxn v3's per-partition errors
and v4's batched, verify-only form (KIP-890 part 1), InitProducerId's KIP-360 retry and fencing, the
PRODUCER_FENCED / INVALID_PRODUCER_EPOCH split by version (KIP-588), EndTxn's retry and state errors,
AddOffsetsToTxn, and FindCoordinator for transactional ids."""

from __future__ import annotations

import pytest

from tests.integration.raw_client import RawClient
from tests.integration.txn_raw import create_topic
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.add_partitions_to_txn import AddPartitionsToTxnRequest

FIND_COORDINATOR, INIT_PRODUCER_ID, ADD_PARTITIONS_TO_TXN, ADD_OFFSETS_TO_TXN, END_TXN = 10, 22, 24, 25, 26
TRANSACTION_KEY_TYPE = 1
_Topic = AddPartitionsToTxnRequest.AddPartitionsToTxnTopic


@pytest.fixture
def client(broker):
    with RawClient(broker.bootstrap) as raw:
        create_topic(raw, "txn-topic")
        yield raw


def init(client: RawClient, transactional_id: str, version: int = 4, producer_id: int = -1,
         producer_epoch: int = -1) -> tuple[int, int, int]:
    response = client.request(INIT_PRODUCER_ID, version, transactional_id=transactional_id,
                              transaction_timeout_ms=60_000, producer_id=producer_id, producer_epoch=producer_epoch)
    return response.error_code, response.producer_id, response.producer_epoch


def add_v3(client: RawClient, transactional_id: str, producer_id: int, epoch: int, topics: dict[str, list[int]],
           version: int = 3) -> dict[tuple[str, int], int]:
    response = client.request(ADD_PARTITIONS_TO_TXN, version, v3_and_below_transactional_id=transactional_id,
                              v3_and_below_producer_id=producer_id, v3_and_below_producer_epoch=epoch,
                              v3_and_below_topics=[_Topic(name=n, partitions=p) for n, p in topics.items()])
    return {(t.name, p.partition_index): p.partition_error_code for t in response.results_by_topic_v3_and_below
            for p in t.results_by_partition}


def end(client: RawClient, transactional_id: str, producer_id: int, epoch: int, commit: bool,
        version: int = 3) -> int:
    return client.request(END_TXN, version, transactional_id=transactional_id, producer_id=producer_id,
                          producer_epoch=epoch, committed=commit).error_code


def test_find_coordinator_names_this_broker_for_transactional_ids(client, broker):
    response = client.request(FIND_COORDINATOR, 4, key_type=TRANSACTION_KEY_TYPE, coordinator_keys=["t1", ""])
    found, empty = response.coordinators
    assert (found.error_code, found.node_id, found.port) == (ErrorCode.NONE, 0, broker.port)
    assert empty.error_code == ErrorCode.INVALID_REQUEST


def test_add_partitions_v3_errors_per_partition(client):
    _, producer_id, epoch = init(client, "apt")
    assert add_v3(client, "apt", producer_id, epoch, {"txn-topic": [0], "missing": [0]}) == {
        ("txn-topic", 0): ErrorCode.OPERATION_NOT_ATTEMPTED, ("missing", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert add_v3(client, "apt", producer_id, epoch, {"txn-topic": [0]}) == {("txn-topic", 0): ErrorCode.NONE}
    assert add_v3(client, "apt", producer_id + 1, epoch, {"txn-topic": [0]}) == {
        ("txn-topic", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}
    assert add_v3(client, "nobody", producer_id, epoch, {"txn-topic": [0]}) == {
        ("txn-topic", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}


def test_add_partitions_v4_batched_and_verify_only(client):
    _, producer_id, epoch = init(client, "batched")

    def add(verify_only: bool, partitions: list[int], version: int = 5) -> dict[int, int]:
        response = client.request(ADD_PARTITIONS_TO_TXN, version, transactions=[
            AddPartitionsToTxnRequest.AddPartitionsToTxnTransaction(
                transactional_id="batched", producer_id=producer_id, producer_epoch=epoch, verify_only=verify_only,
                topics=[_Topic(name="txn-topic", partitions=partitions)])])
        [result] = response.results_by_transaction
        assert (response.error_code, result.transactional_id) == (ErrorCode.NONE, "batched")
        return {p.partition_index: p.partition_error_code for t in result.topic_results
                for p in t.results_by_partition}

    assert add(True, [0]) == {0: ErrorCode.TRANSACTION_ABORTABLE}  # not in the transaction yet
    assert add(True, [0], version=4) == {0: ErrorCode.INVALID_TXN_STATE}
    assert add(False, [0]) == {0: ErrorCode.NONE}
    assert add(True, [0]) == {0: ErrorCode.NONE}


def test_init_producer_id_retry_fencing_and_version_errors(client):
    code, producer_id, epoch = init(client, "kip360")
    assert (code, epoch) == (ErrorCode.NONE, 0)
    assert init(client, "kip360", producer_id=producer_id, producer_epoch=0) == (ErrorCode.NONE, producer_id, 1)
    # the answer was lost and the producer asks again with the epoch it had: the same bump, not another
    assert init(client, "kip360", producer_id=producer_id, producer_epoch=0) == (ErrorCode.NONE, producer_id, 1)
    assert init(client, "kip360", producer_id=producer_id + 7, producer_epoch=1)[0] == ErrorCode.PRODUCER_FENCED
    assert init(client, "kip360", version=3, producer_id=producer_id + 7, producer_epoch=1)[0] == (
        ErrorCode.INVALID_PRODUCER_EPOCH)
    assert client.request(INIT_PRODUCER_ID, 4, transactional_id="kip360", transaction_timeout_ms=900_001,
                          producer_id=-1, producer_epoch=-1).error_code == ErrorCode.INVALID_TRANSACTION_TIMEOUT


def test_end_txn_states_and_fenced_epochs(client):
    _, producer_id, epoch = init(client, "ender")
    assert end(client, "ender", producer_id, epoch, commit=True) == ErrorCode.INVALID_TXN_STATE  # nothing open
    assert add_v3(client, "ender", producer_id, epoch, {"txn-topic": [0]})[("txn-topic", 0)] == ErrorCode.NONE
    group_offsets = client.request(ADD_OFFSETS_TO_TXN, 3, transactional_id="ender", producer_id=producer_id,
                                   producer_epoch=epoch, group_id="ender-group")
    assert group_offsets.error_code == ErrorCode.NONE
    assert end(client, "ender", producer_id, epoch, commit=True) == ErrorCode.NONE
    # a retried commit answers NONE once complete (CONCURRENT_TRANSACTIONS while the markers are in flight)
    codes = {end(client, "ender", producer_id, epoch, commit=True) for _ in range(3)}
    assert codes <= {ErrorCode.NONE, ErrorCode.CONCURRENT_TRANSACTIONS}
    assert end(client, "ender", producer_id, epoch - 1, commit=True) == ErrorCode.PRODUCER_FENCED
    assert end(client, "ender", producer_id, epoch - 1, commit=True, version=1) == ErrorCode.INVALID_PRODUCER_EPOCH
