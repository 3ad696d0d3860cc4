"""A transaction by hand, on a real broker, without a transaction coordinator: an idempotent producer id from
InitProducerId, transactional batches produced with it, and the COMMIT/ABORT markers sent as WriteTxnMarkers, as a
transaction coordinator would send them. Such batches are in no transaction the coordinator knows, so the partition
leader's verification (KIP-890 part 1) would refuse them: tests of them use the `broker` fixture here, a broker with
transaction.partition.verification.enable false (as Kafka brokers before 3.6, where hanging transactions came from)."""

from __future__ import annotations

import time

import pytest

from tests.integration.broker_process import BrokerProcess
from tests.integration.raw_client import RawClient
from wirebroker.protocol import records
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.list_offsets import ListOffsetsRequest
from wirebroker.protocol.messages.metadata import MetadataRequest
from wirebroker.protocol.messages.produce import ProduceRequest
from wirebroker.protocol.messages.write_txn_markers import WriteTxnMarkersRequest

PRODUCE, LIST_OFFSETS, METADATA, INIT_PRODUCER_ID, WRITE_TXN_MARKERS = 0, 2, 3, 22, 27
READ_UNCOMMITTED, READ_COMMITTED = 0, 1
LATEST = -1
UNVERIFIED = {"transaction.partition.verification.enable": "false"}


@pytest.fixture(name="broker")
def unverified_broker(broker_factory) -> BrokerProcess:
    """A broker that appends transactional batches without asking the coordinator (import it as the `broker`)."""
    return broker_factory(**UNVERIFIED)


def create_topic(client: RawClient, name: str) -> None:
    response = client.request(METADATA, 9, topics=[MetadataRequest.MetadataRequestTopic(name=name)],
                              allow_auto_topic_creation=True)
    assert response.topics[0].error_code == ErrorCode.NONE


def init_producer_id(client: RawClient) -> tuple[int, int]:
    response = client.request(INIT_PRODUCER_ID, 4, transactional_id=None, transaction_timeout_ms=60_000,
                              producer_id=-1, producer_epoch=-1)
    assert response.error_code == ErrorCode.NONE
    return response.producer_id, response.producer_epoch


class RawTransactions:
    """One producer id's transactions on a partition: `send` transactional batches, then `end` them."""

    def __init__(self, client: RawClient, topic: str, partition: int = 0) -> None:
        self.client = client
        self.topic = topic
        self.partition = partition
        self.producer_id, self.producer_epoch = init_producer_id(client)
        self.sequence = 0

    def send(self, values: list[bytes], transactional: bool = True, expected_error: int = ErrorCode.NONE) -> int:
        """Produce one batch of these values; its base offset (-1 when refused with `expected_error`)."""
        now = int(time.time() * 1000)
        batch = records.build_batch([(now, None, value, ()) for value in values], producer_id=self.producer_id,
                                    producer_epoch=self.producer_epoch, base_sequence=self.sequence,
                                    is_transactional=transactional)
        self.sequence += len(values)
        response = self.client.request(PRODUCE, 9, transactional_id="raw-txn" if transactional else None, acks=-1,
                                       timeout_ms=5000, topic_data=[ProduceRequest.TopicProduceData(
                                           name=self.topic, partition_data=[ProduceRequest.PartitionProduceData(
                                               index=self.partition, records=batch)])])
        answer = response.responses[0].partition_responses[0]
        assert answer.error_code == expected_error, ErrorCode(answer.error_code).name
        return answer.base_offset

    def end(self, commit: bool, coordinator_epoch: int = 0, producer_epoch: int | None = None,
            partitions: list[tuple[str, int]] | None = None) -> dict[tuple[str, int], int]:
        return write_txn_marker(self.client, self.producer_id,
                                self.producer_epoch if producer_epoch is None else producer_epoch, commit,
                                partitions or [(self.topic, self.partition)], coordinator_epoch)


def write_txn_marker(client: RawClient, producer_id: int, producer_epoch: int, commit: bool,
                     partitions: list[tuple[str, int]], coordinator_epoch: int = 0, version: int = 1,
                     transaction_version: int = 0) -> dict[tuple[str, int], int]:
    """Send one marker (`transaction_version` only from v2); the error code of each partition."""
    by_topic: dict[str, list[int]] = {}
    for topic, index in partitions:
        by_topic.setdefault(topic, []).append(index)
    marker = WriteTxnMarkersRequest.WritableTxnMarker(
        producer_id=producer_id, producer_epoch=producer_epoch, transaction_result=commit,
        coordinator_epoch=coordinator_epoch, transaction_version=transaction_version,
        topics=[WriteTxnMarkersRequest.WritableTxnMarkerTopic(name=t, partition_indexes=p)
                for t, p in by_topic.items()])
    response = client.request(WRITE_TXN_MARKERS, version, markers=[marker])
    assert [m.producer_id for m in response.markers] == [producer_id]
    return {(t.name, p.partition_index): p.error_code for t in response.markers[0].topics for p in t.partitions}


def latest_offset(client: RawClient, topic: str, isolation_level: int, partition: int = 0) -> int:
    response = client.request(LIST_OFFSETS, 7, replica_id=-1, isolation_level=isolation_level, topics=[
        ListOffsetsRequest.ListOffsetsTopic(name=topic, partitions=[
            ListOffsetsRequest.ListOffsetsPartition(partition_index=partition, timestamp=LATEST)])])
    answer = response.topics[0].partitions[0]
    assert answer.error_code == ErrorCode.NONE
    return answer.offset
