"""Transaction verification of protocol 1 producers (KIP-890 part 1, transaction.partition.verification.enable) at
the wire, raw requests on a real broker: a transactional Produce up to v11 to a partition the producer did not add
with AddPartitionsToTxn is refused (v11 TRANSACTION_ABORTABLE, older versions INVALID_TXN_STATE) and nothing is
appended; once added it is appended, and the transaction's later batches there are not asked about; an unknown
transactional id is refused; with the key false such records are appended unchecked, as before KIP-890. TxnOffsetCommit
up to v4 likewise needs the group's offsets partition added (AddOffsetsToTxn)."""

from __future__ import annotations

import time

from tests.integration.raw_client import RawClient
from tests.integration.test_transactions_tv2 import end
from tests.integration.txn_raw import READ_UNCOMMITTED, create_topic, latest_offset
from wirebroker.protocol import records
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.add_partitions_to_txn import AddPartitionsToTxnRequest
from wirebroker.protocol.messages.produce import ProduceRequest
from wirebroker.protocol.messages.txn_offset_commit import TxnOffsetCommitRequest

PRODUCE, FIND_COORDINATOR, INIT_PRODUCER_ID, ADD_PARTITIONS_TO_TXN, ADD_OFFSETS_TO_TXN, TXN_OFFSET_COMMIT = (
    0, 10, 22, 24, 25, 28)
TOPIC, TXN_ID, GROUP = "verified", "tv2-producer", "verified-group"  # test_transactions_tv2's id, for its `end`
PARTITIONS = {"num.partitions": "3"}  # the topic's, created by Metadata


def init(client: RawClient) -> tuple[int, int]:
    response = client.request(INIT_PRODUCER_ID, 3, transactional_id=TXN_ID, transaction_timeout_ms=60_000,
                              producer_id=-1, producer_epoch=-1)
    assert response.error_code == ErrorCode.NONE
    return response.producer_id, response.producer_epoch


def add_partitions(client: RawClient, producer_id: int, epoch: int, partitions: list[int]) -> None:
    response = client.request(ADD_PARTITIONS_TO_TXN, 3, v3_and_below_transactional_id=TXN_ID,
                              v3_and_below_producer_id=producer_id, v3_and_below_producer_epoch=epoch,
                              v3_and_below_topics=[AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(
                                  name=TOPIC, partitions=partitions)])
    assert {p.partition_error_code for t in response.results_by_topic_v3_and_below
            for p in t.results_by_partition} == {ErrorCode.NONE}


def produce(client: RawClient, version: int, producer_id: int, epoch: int, sequence: int,
            partitions: list[int], transactional_id: str = TXN_ID) -> dict[int, tuple[int, str | None]]:
    """One transactional batch to each partition; the (error code, error message) of each."""
    now = int(time.time() * 1000)
    response = client.request(PRODUCE, version, transactional_id=transactional_id, acks=-1, timeout_ms=5000,
                              topic_data=[ProduceRequest.TopicProduceData(name=TOPIC, partition_data=[
                                  ProduceRequest.PartitionProduceData(index=index, records=records.build_batch(
                                      [(now, None, b"v", ())], producer_id=producer_id, producer_epoch=epoch,
                                      base_sequence=sequence, is_transactional=True))
                                  for index in partitions])])
    return {p.index: (p.error_code, p.error_message) for p in response.responses[0].partition_responses}


def commit_offset(client: RawClient, version: int, producer_id: int, epoch: int) -> int:
    response = client.request(TXN_OFFSET_COMMIT, version, transactional_id=TXN_ID, group_id=GROUP,
                              producer_id=producer_id, producer_epoch=epoch, generation_id=-1, member_id="",
                              group_instance_id=None, topics=[TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic(
                                  name=TOPIC, partitions=[TxnOffsetCommitRequest.TxnOffsetCommitRequestPartition(
                                      partition_index=0, committed_offset=1, committed_leader_epoch=-1)])])
    return response.topics[0].partitions[0].error_code


def ends(client: RawClient, partitions: list[int]) -> list[int]:
    return [latest_offset(client, TOPIC, READ_UNCOMMITTED, partition) for partition in partitions]


def test_a_partition_not_added_is_refused_then_appended_once_added(broker_factory):
    broker = broker_factory(**PARTITIONS)
    with RawClient(broker.bootstrap) as client:
        create_topic(client, TOPIC)
        producer_id, epoch = init(client)
        not_added = (ErrorCode.INVALID_TXN_STATE, "Partition was not added to the transaction")
        assert produce(client, 9, producer_id, epoch, 0, [0]) == {0: not_added}
        assert produce(client, 11, producer_id, epoch, 0, [0])[0][0] == ErrorCode.TRANSACTION_ABORTABLE
        assert ends(client, [0, 1]) == [0, 0]

        add_partitions(client, producer_id, epoch, [0])
        # one partition added, one not: each answered on its own
        assert produce(client, 11, producer_id, epoch, 0, [0, 1]) == {
            0: (ErrorCode.NONE, None), 1: (ErrorCode.TRANSACTION_ABORTABLE, None)}
        assert produce(client, 9, producer_id, epoch, 1, [0]) == {0: (ErrorCode.NONE, None)}  # open here now
        assert ends(client, [0, 1]) == [2, 0]

        # a transactional id the coordinator does not know, with the producer id of another
        assert produce(client, 9, producer_id, epoch, 0, [1], transactional_id="stranger")[1][0] == (
            ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        assert ends(client, [0, 1]) == [2, 0]
        assert end(client, producer_id, epoch, commit=True, version=3).error_code == ErrorCode.NONE


def test_after_the_commit_the_partition_must_be_added_again(broker_factory):
    broker = broker_factory(**PARTITIONS)
    with RawClient(broker.bootstrap) as client:
        create_topic(client, TOPIC)
        producer_id, epoch = init(client)
        add_partitions(client, producer_id, epoch, [2])
        assert produce(client, 10, producer_id, epoch, 0, [2]) == {2: (ErrorCode.NONE, None)}
        assert end(client, producer_id, epoch, commit=True, version=3).error_code == ErrorCode.NONE
        deadline = time.monotonic() + 15
        while ends(client, [2]) != [2]:  # the commit marker
            assert time.monotonic() < deadline, "the commit marker"
            time.sleep(0.05)
        assert produce(client, 10, producer_id, epoch, 1, [2])[2][0] == ErrorCode.INVALID_TXN_STATE
        assert ends(client, [2]) == [2]


def test_without_verification_a_partition_not_added_is_appended(broker_factory):
    broker = broker_factory(**PARTITIONS, **{"transaction.partition.verification.enable": "false"})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, TOPIC)
        producer_id, epoch = init(client)
        assert produce(client, 11, producer_id, epoch, 0, [0]) == {0: (ErrorCode.NONE, None)}
        assert ends(client, [0]) == [1]
        # protocol 2 still adds the partition itself (v12 is not verification but its add)
        assert produce(client, 12, producer_id, epoch, 0, [1]) == {1: (ErrorCode.NONE, None)}


def test_txn_offset_commit_up_to_v4_needs_the_offsets_partition_added(broker_factory):
    broker = broker_factory(**PARTITIONS)
    with RawClient(broker.bootstrap) as client:
        create_topic(client, TOPIC)
        assert client.request(FIND_COORDINATOR, 1, key=GROUP, key_type=0).error_code == ErrorCode.NONE
        producer_id, epoch = init(client)
        assert commit_offset(client, 3, producer_id, epoch) == ErrorCode.INVALID_TXN_STATE
        assert commit_offset(client, 4, producer_id, epoch) == ErrorCode.TRANSACTION_ABORTABLE
        added = client.request(ADD_OFFSETS_TO_TXN, 3, transactional_id=TXN_ID, producer_id=producer_id,
                               producer_epoch=epoch, group_id=GROUP)
        assert added.error_code == ErrorCode.NONE
        assert commit_offset(client, 3, producer_id, epoch) == ErrorCode.NONE
        assert end(client, producer_id, epoch, commit=True, version=3).error_code == ErrorCode.NONE
