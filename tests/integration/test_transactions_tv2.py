"""EndTxn v5 (transaction protocol 2, KIP-890 part 2) at the wire, raw requests on a real broker: every end bumps
the producer epoch and answers it, the next transaction runs at it, a retry (the epoch before the bump) of a
completed end is answered NONE, an abort needs no open transaction, and the markers in the log carry the bumped
epoch."""

from __future__ import annotations

import time

from tests.integration.raw_client import RawClient
from tests.integration.txn_raw import READ_COMMITTED, create_topic, latest_offset
from wirebroker.protocol import records
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.add_partitions_to_txn import AddPartitionsToTxnRequest
from wirebroker.protocol.messages.fetch import FetchRequest
from wirebroker.protocol.messages.produce import ProduceRequest

PRODUCE, FETCH, INIT_PRODUCER_ID, ADD_PARTITIONS_TO_TXN, END_TXN = 0, 1, 22, 24, 26
TOPIC, TXN_ID = "tv2-end", "tv2-producer"


def init(client: RawClient) -> tuple[int, int]:
    response = client.request(INIT_PRODUCER_ID, 4, transactional_id=TXN_ID, transaction_timeout_ms=60_000,
                              producer_id=-1, producer_epoch=-1)
    assert response.error_code == ErrorCode.NONE
    return response.producer_id, response.producer_epoch


def add_partition(client: RawClient, producer_id: int, epoch: int) -> int:
    response = client.request(ADD_PARTITIONS_TO_TXN, 3, v3_and_below_transactional_id=TXN_ID,
                              v3_and_below_producer_id=producer_id, v3_and_below_producer_epoch=epoch,
                              v3_and_below_topics=[AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(
                                  name=TOPIC, partitions=[0])])
    return response.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code


def produce(client: RawClient, producer_id: int, epoch: int, value: bytes) -> None:
    batch = records.build_batch([(int(time.time() * 1000), None, value, ())], producer_id=producer_id,
                                producer_epoch=epoch, base_sequence=0, is_transactional=True)
    response = client.request(PRODUCE, 9, transactional_id=TXN_ID, acks=-1, timeout_ms=5000, topic_data=[
        ProduceRequest.TopicProduceData(name=TOPIC, partition_data=[
            ProduceRequest.PartitionProduceData(index=0, records=batch)])])
    assert response.responses[0].partition_responses[0].error_code == ErrorCode.NONE


def end(client: RawClient, producer_id: int, epoch: int, commit: bool, version: int = 5):
    return client.request(END_TXN, version, transactional_id=TXN_ID, producer_id=producer_id, producer_epoch=epoch,
                          committed=commit)


def end_until_complete(client: RawClient, producer_id: int, epoch: int, commit: bool):
    """A retry of an end: CONCURRENT_TRANSACTIONS while its markers are in flight, then the answer."""
    deadline = time.monotonic() + 15
    while True:
        response = end(client, producer_id, epoch, commit)
        if response.error_code != ErrorCode.CONCURRENT_TRANSACTIONS or time.monotonic() > deadline:
            return response
        time.sleep(0.05)


def control_batches(client: RawClient) -> list[tuple[int, int, bool]]:
    """(producer id, producer epoch, commit) of every transaction marker in the partition."""
    response = client.request(FETCH, 12, replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=10_000_000,
                              isolation_level=0, topics=[FetchRequest.FetchTopic(topic=TOPIC, partitions=[
                                  FetchRequest.FetchPartition(partition=0, fetch_offset=0,
                                                              partition_max_bytes=10_000_000)])])
    data, pos, markers = bytes(response.responses[0].partitions[0].records or b""), 0, []
    while pos < len(data):
        header = records.read_header(data, pos)
        if header.is_control:
            [record] = records.iter_records(data, pos, header, 1 << 20)
            markers.append((header.producer_id, header.producer_epoch, records.read_control_record(record)[0]))
        pos += header.size
    return markers


def first_transaction(client: RawClient, value: bytes) -> tuple[int, int]:
    """The topic, the producer's id and epoch, and its first transaction open with one record in it."""
    create_topic(client, TOPIC)
    producer_id, epoch = init(client)
    assert add_partition(client, producer_id, epoch) == ErrorCode.NONE
    produce(client, producer_id, epoch, value)
    return producer_id, epoch


def test_end_txn_v5_bumps_the_epoch_at_every_end(broker):
    with RawClient(broker.bootstrap) as client:
        producer_id, epoch = first_transaction(client, b"committed")
        committed = end(client, producer_id, epoch, commit=True)
        assert (committed.error_code, committed.producer_id, committed.producer_epoch) == (
            ErrorCode.NONE, producer_id, epoch + 1)
        # the retry of the commit (the epoch before the bump) once complete: NONE, with the id and epoch to go on with
        retried = end_until_complete(client, producer_id, epoch, commit=True)
        assert (retried.error_code, retried.producer_id, retried.producer_epoch) == (
            ErrorCode.NONE, producer_id, epoch + 1)
        assert end(client, producer_id, epoch, commit=False).error_code == ErrorCode.INVALID_TXN_STATE
        assert latest_offset(client, TOPIC, READ_COMMITTED) == 2
        assert control_batches(client) == [(producer_id, epoch + 1, True)]

        # the next transaction runs at the bumped epoch; the old one is fenced
        assert add_partition(client, producer_id, epoch) == ErrorCode.PRODUCER_FENCED
        assert add_partition(client, producer_id, epoch + 1) == ErrorCode.NONE
        produce(client, producer_id, epoch + 1, b"aborted")
        aborted = end(client, producer_id, epoch + 1, commit=False)
        assert (aborted.error_code, aborted.producer_epoch) == (ErrorCode.NONE, epoch + 2)
        retried = end_until_complete(client, producer_id, epoch + 1, commit=False)
        assert (retried.error_code, retried.producer_id, retried.producer_epoch) == (
            ErrorCode.NONE, producer_id, epoch + 2)
        assert control_batches(client) == [(producer_id, epoch + 1, True), (producer_id, epoch + 2, False)]
        assert latest_offset(client, TOPIC, READ_COMMITTED) == 4

        # an abort with nothing open bumps the epoch too; a commit with nothing open is refused
        nothing = end(client, producer_id, epoch + 2, commit=False)
        assert (nothing.error_code, nothing.producer_epoch) == (ErrorCode.NONE, epoch + 3)
        assert end_until_complete(client, producer_id, epoch + 2, commit=False).error_code == ErrorCode.NONE
        assert end(client, producer_id, epoch + 3, commit=True).error_code == ErrorCode.INVALID_TXN_STATE
        fenced = end(client, producer_id, epoch, commit=True)
        assert (fenced.error_code, fenced.producer_id, fenced.producer_epoch) == (ErrorCode.PRODUCER_FENCED, -1, -1)


def test_end_txn_v4_keeps_the_epoch(broker):
    """Protocol 1 (v0-4) next to it: the epoch stays, and the markers carry it."""
    with RawClient(broker.bootstrap) as client:
        producer_id, epoch = first_transaction(client, b"v4")
        assert end(client, producer_id, epoch, commit=True, version=4).error_code == ErrorCode.NONE
        deadline = time.monotonic() + 15
        while latest_offset(client, TOPIC, READ_COMMITTED) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert control_batches(client) == [(producer_id, epoch, True)]
        assert add_partition(client, producer_id, epoch) == ErrorCode.NONE
