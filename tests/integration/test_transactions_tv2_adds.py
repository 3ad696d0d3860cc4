"""A partition leader's adds of transaction protocol 2 (KIP-890 part 2) at the wire, raw requests on a real broker:
transactional records at Produce v12 and offsets at TxnOffsetCommit v5 join the transaction without AddPartitionsToTxn
or AddOffsetsToTxn; the next transaction's first records right after a commit go in (the broker retries the
coordinator's CONCURRENT_TRANSACTIONS while the markers are written); a fenced epoch and an unknown producer id are
refused as Kafka refuses them; aborted offsets are dropped, committed ones kept."""

from __future__ import annotations

import time

from tests.integration.raw_client import RawClient
from tests.integration.test_transactions_tv2 import end, init
from tests.integration.txn_raw import READ_COMMITTED, create_topic, latest_offset
from wirebroker.protocol import records
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.offset_fetch import OffsetFetchRequest
from wirebroker.protocol.messages.produce import ProduceRequest
from wirebroker.protocol.messages.txn_offset_commit import TxnOffsetCommitRequest

PRODUCE, OFFSET_FETCH, FIND_COORDINATOR, TXN_OFFSET_COMMIT, DESCRIBE_TRANSACTIONS = 0, 9, 10, 28, 65
TOPIC, TXN_ID, GROUP = "tv2-end", "tv2-producer", "tv2-group"  # test_transactions_tv2's topic and id


def produce(client: RawClient, producer_id: int, epoch: int, sequence: int, value: bytes, version: int = 12) -> int:
    batch = records.build_batch([(int(time.time() * 1000), None, value, ())], producer_id=producer_id,
                                producer_epoch=epoch, base_sequence=sequence, is_transactional=True)
    response = client.request(PRODUCE, version, transactional_id=TXN_ID, acks=-1, timeout_ms=5000, topic_data=[
        ProduceRequest.TopicProduceData(name=TOPIC, partition_data=[
            ProduceRequest.PartitionProduceData(index=0, records=batch)])])
    return response.responses[0].partition_responses[0].error_code


def commit_offset(client: RawClient, producer_id: int, epoch: int, offset: int) -> int:
    response = client.request(TXN_OFFSET_COMMIT, 5, transactional_id=TXN_ID, group_id=GROUP, producer_id=producer_id,
                              producer_epoch=epoch, generation_id=-1, member_id="", group_instance_id=None,
                              topics=[TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic(name=TOPIC, partitions=[
                                  TxnOffsetCommitRequest.TxnOffsetCommitRequestPartition(
                                      partition_index=0, committed_offset=offset, committed_leader_epoch=-1)])])
    return response.topics[0].partitions[0].error_code


def transaction(client: RawClient) -> tuple[str, list[tuple[str, list[int]]]]:
    [state] = client.request(DESCRIBE_TRANSACTIONS, 0, transactional_ids=[TXN_ID]).transaction_states
    return state.transaction_state, sorted((t.topic, sorted(t.partitions)) for t in state.topics)


def group_offsets(bootstrap: str, group: str = GROUP, topic: str = TOPIC, partitions: int = 1
                  ) -> dict[tuple[str, int], int]:
    """The group's committed offsets of the topic (those of open transactions are not), by a raw OffsetFetch."""
    with RawClient(bootstrap) as client:
        response = client.request(OFFSET_FETCH, 6, group_id=group, topics=[
            OffsetFetchRequest.OffsetFetchRequestTopic(name=topic, partition_indexes=list(range(partitions)))])
    assert response.error_code == ErrorCode.NONE
    return {(t.name, p.partition_index): p.committed_offset for t in response.topics for p in t.partitions
            if p.committed_offset >= 0}


def wait_for(condition, what: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_produce_v12_and_txn_offset_commit_v5_add_their_partitions(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, TOPIC)
        wait_for(lambda: client.request(FIND_COORDINATOR, 1, key=GROUP, key_type=0).error_code == ErrorCode.NONE,
                 "the group's coordinator")  # as a producer asks before TxnOffsetCommit
        producer_id, epoch = init(client)
        assert produce(client, producer_id, epoch, 0, b"first") == ErrorCode.NONE
        assert commit_offset(client, producer_id, epoch, 1) == ErrorCode.NONE
        state, partitions = transaction(client)
        assert state == "Ongoing"
        assert [name for name, _ in partitions] == ["__consumer_offsets", TOPIC]
        assert produce(client, producer_id, epoch, 1, b"second") == ErrorCode.NONE  # open here: no add needed
        assert latest_offset(client, TOPIC, READ_COMMITTED) == 0

        assert end(client, producer_id, epoch, commit=True).producer_epoch == epoch + 1
        # the next transaction at once: its add may meet the commit's markers in flight, CONCURRENT_TRANSACTIONS
        # (the broker retries for 100 ms, the producer after that)
        codes: list[int] = []
        wait_for(lambda: codes.append(produce(client, producer_id, epoch + 1, 0, b"aborted"))
                 or codes[-1] != ErrorCode.CONCURRENT_TRANSACTIONS, "the next transaction's add")
        assert codes[-1] == ErrorCode.NONE
        wait_for(lambda: latest_offset(client, TOPIC, READ_COMMITTED) == 3, "the commit marker, then the record")
        wait_for(lambda: group_offsets(broker.bootstrap) == {(TOPIC, 0): 1}, "the committed offset")
        assert commit_offset(client, producer_id, epoch + 1, 2) == ErrorCode.NONE
        assert end(client, producer_id, epoch + 1, commit=False).producer_epoch == epoch + 2
        wait_for(lambda: transaction(client)[0] == "CompleteAbort", "the abort's completion")
        assert group_offsets(broker.bootstrap) == {(TOPIC, 0): 1}  # the aborted offset is dropped

        # the epoch the ends bumped past, and a producer id the transactional id does not have
        assert produce(client, producer_id, epoch, 5, b"zombie") == ErrorCode.INVALID_PRODUCER_EPOCH
        assert commit_offset(client, producer_id, epoch + 1, 7) == ErrorCode.INVALID_PRODUCER_EPOCH
        assert produce(client, producer_id + 100, 0, 0, b"stranger") == ErrorCode.INVALID_PRODUCER_ID_MAPPING
        assert transaction(client)[0] == "CompleteAbort"
