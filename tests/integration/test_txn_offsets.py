"""TxnOffsetCommit on a real broker: offsets committed in a transaction stay pending (OffsetFetch with require_stable
answers UNSTABLE_OFFSET_COMMIT) until WriteTxnMarkers ends the transaction on `__consumer_offsets`; COMMIT makes them
the group's offsets, ABORT drops them, and a broker killed (-9) and restarted replays both from the log; Kafka's
DumpLogSegments reads the transactional batch and its marker."""

from __future__ import annotations

import re

from compat_tests.reference_kafka import install_jars, run_tool
from tests.integration.raw_client import RawClient
from tests.integration.txn_raw import (  # noqa: F401  (unverified_broker: the broker fixture)
    create_topic,
    init_producer_id,
    unverified_broker,
    write_txn_marker,
)
from wirebroker.coordinator.group import partition_for
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.offset_fetch import OffsetFetchRequest
from wirebroker.protocol.messages.txn_offset_commit import TxnOffsetCommitRequest

FIND_COORDINATOR, OFFSET_FETCH, TXN_OFFSET_COMMIT = 10, 9, 28
OFFSETS_PARTITIONS = 50  # offsets.topic.num.partitions
DUMP_LOG_SEGMENTS = "org.apache.kafka.tools.DumpLogSegments"


def txn_offset_commit(client: RawClient, group: str, producer_id: int, producer_epoch: int, offset: int) -> int:
    response = client.request(TXN_OFFSET_COMMIT, 3, transactional_id="raw-txn", group_id=group,
                              producer_id=producer_id, producer_epoch=producer_epoch, generation_id=-1, member_id="",
                              group_instance_id=None, topics=[TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic(
                                  name="in", partitions=[TxnOffsetCommitRequest.TxnOffsetCommitRequestPartition(
                                      partition_index=0, committed_offset=offset, committed_leader_epoch=-1,
                                      committed_metadata="")])])
    return response.topics[0].partitions[0].error_code


def offset_fetch(client: RawClient, group: str, require_stable: bool = True) -> tuple[int, int]:
    """(offset, error code) of partition 0 of "in", asked with OffsetFetch v7."""
    response = client.request(OFFSET_FETCH, 7, group_id=group, require_stable=require_stable, topics=[
        OffsetFetchRequest.OffsetFetchRequestTopic(name="in", partition_indexes=[0])])
    assert response.error_code == ErrorCode.NONE
    partition = response.topics[0].partitions[0]
    return partition.committed_offset, partition.error_code


def end_transaction(client: RawClient, group: str, producer_id: int, producer_epoch: int, commit: bool) -> None:
    offsets_partition = ("__consumer_offsets", partition_for(group, OFFSETS_PARTITIONS))
    assert write_txn_marker(client, producer_id, producer_epoch, commit, [offsets_partition]) == {
        offsets_partition: ErrorCode.NONE}


def test_committed_and_aborted_transactional_offsets_survive_a_crash(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "in")
        assert client.request(FIND_COORDINATOR, 1, key="g", key_type=0).error_code == ErrorCode.NONE
        producer_id, producer_epoch = init_producer_id(client)
        assert txn_offset_commit(client, "committed", producer_id, producer_epoch, 42) == ErrorCode.NONE
        assert offset_fetch(client, "committed") == (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)
        assert offset_fetch(client, "committed", require_stable=False) == (-1, ErrorCode.NONE)
        end_transaction(client, "committed", producer_id, producer_epoch, commit=True)
        assert offset_fetch(client, "committed") == (42, ErrorCode.NONE)
        assert txn_offset_commit(client, "aborted", producer_id, producer_epoch, 7) == ErrorCode.NONE
        end_transaction(client, "aborted", producer_id, producer_epoch, commit=False)
        assert offset_fetch(client, "aborted") == (-1, ErrorCode.NONE)
        assert txn_offset_commit(client, "open", producer_id, producer_epoch, 9) == ErrorCode.NONE
        # A marker with a newer epoch fences the producer's older epoch on that partition.
        end_transaction(client, "committed", producer_id, producer_epoch + 1, commit=False)
        assert txn_offset_commit(client, "committed", producer_id, producer_epoch, 1) == \
            ErrorCode.INVALID_PRODUCER_EPOCH
    broker.kill()
    broker.start()
    with RawClient(broker.bootstrap) as client:
        for _ in range(100):  # the group coordinator loads its partitions in the background
            answer = offset_fetch(client, "committed")
            if answer[1] != ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
                break
        assert answer == (42, ErrorCode.NONE)
        assert offset_fetch(client, "aborted") == (-1, ErrorCode.NONE)
        assert offset_fetch(client, "open") == (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)


def test_dump_log_segments_reads_transactional_offset_commits(broker):
    jars = install_jars()
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "in")
        assert client.request(FIND_COORDINATOR, 1, key="g", key_type=0).error_code == ErrorCode.NONE
        producer_id, producer_epoch = init_producer_id(client)
        assert txn_offset_commit(client, "dumped", producer_id, producer_epoch, 42) == ErrorCode.NONE
        end_transaction(client, "dumped", producer_id, producer_epoch, commit=True)
    broker.stop()
    partition_dir = broker.data_dir / f"__consumer_offsets-{partition_for('dumped', OFFSETS_PARTITIONS)}"
    dump = run_tool(jars, DUMP_LOG_SEGMENTS, ["--offsets-decoder", "--files",
                                              str(partition_dir / "00000000000000000000.log")], check=True).stdout
    batches = re.findall(r"producerId: (\d+) .*isTransactional: (\w+) isControl: (\w+)", dump)
    assert batches == [(str(producer_id), "true", "false"), (str(producer_id), "true", "true")]
    assert '"group":"dumped","topic":"in","partition":0' in dump and '"offset":42' in dump
    assert "endTxnMarker: COMMIT coordinatorEpoch: 0" in dump
