"""The failover tests' verdict: what counts as lost, duplicated, out of order; percentiles; failover samples."""

from __future__ import annotations

from pathlib import Path

from tests.integration.batch_dump import duplicate_batches
from tests.integration.failover_workload import (
    Ack,
    Record,
    failover_seconds,
    judge,
    percentile,
)
from wirebroker.protocol import records
from wirebroker.protocol.compression import CompressionType


def ack(value: str, partition: int, offset: int, sent_at: float = 0.0, acked_at: float = 0.0) -> Ack:
    return Ack(value.split(":")[0], value, partition, offset, sent_at, acked_at)


def test_everything_acknowledged_read_once_in_order_is_clean():
    acks = [ack("c:0", 0, 0), ack("c:1", 1, 0), ack("c:2", 0, 1)]
    records = [Record(0, 0, "c:0"), Record(1, 0, "c:1"), Record(0, 1, "c:2"), Record(0, 2, "7.0")]
    assert judge(acks, records).problems() == ""


def test_lost_duplicated_reordered_and_misplaced_records_are_named():
    acks = [ack("c:0", 0, 0), ack("c:1", 0, 1), ack("c:2", 0, 2), ack("c:3", 1, 0)]
    records = [Record(0, 0, "c:1"), Record(0, 1, "c:0"), Record(0, 2, "c:0"), Record(0, 3, "c:3")]
    verdict = judge(acks, records)
    assert [a.value for a in verdict.lost] == ["c:2"]
    assert verdict.duplicates == {"c:0": 2}
    assert verdict.out_of_order == ["c:0 at 0/1 after c #1 at offset 0", "c:0 at 0/2 after c #0 at offset 1"]
    assert verdict.misplaced == ["c:0 acked at 0/0, read at Record(partition=0, offset=1, value='c:0')",
                                 "c:1 acked at 0/1, read at Record(partition=0, offset=0, value='c:1')",
                                 "c:3 acked at 1/0, read at Record(partition=0, offset=3, value='c:3')"]
    assert "1 of 4 acknowledged records lost" in verdict.problems()


def test_java_values_are_ordered_by_their_number():
    records = [Record(0, 0, "7.10"), Record(0, 1, "7.9")]
    assert judge([], records).out_of_order == ["7.9 at 0/1 after 7 #10 at offset 0"]


def test_percentiles_are_nearest_rank():
    samples = [float(n) for n in range(1, 11)]
    assert (percentile(samples, 0.5), percentile(samples, 0.99)) == (5.0, 10.0)
    assert percentile([3.0], 0.5) == 3.0


def test_failover_is_measured_per_partition_from_records_sent_after_the_kill():
    acks = [ack("c:0", 0, 0, sent_at=9.0, acked_at=10.5),  # sent before the kill: not a sample
            ack("c:1", 0, 1, sent_at=10.2, acked_at=16.0), ack("c:2", 0, 2, sent_at=10.3, acked_at=16.1),
            ack("c:3", 1, 0, sent_at=10.4, acked_at=13.0), ack("c:4", 2, 0, sent_at=10.4, acked_at=11.0)]
    assert failover_seconds(acks, {0, 1}, killed_at=10.0) == [6.0, 3.0]


class TwoNodes:
    """The part of ClusterProcess that batch_dump reads: node ids, partition directories, the leader."""

    node_ids = [1, 2]

    def __init__(self, root: Path) -> None:
        self.root = root

    def partition_dir(self, node_id: int, topic: str, partition: int) -> Path:
        return self.root / f"broker{node_id}" / f"{topic}-{partition}"

    def partition_state(self, topic: str, partition: int) -> dict:
        return {"leader": 1}


def write_segment(directory: Path, *batches: bytes) -> None:
    directory.mkdir(parents=True)
    (directory / "00000000000000000000.log").write_bytes(b"".join(batches))


def steady_batch(values: list[str], base_offset: int, producer_epoch: int, base_sequence: int, leader_epoch: int,
                 compression: int = CompressionType.NONE) -> bytes:
    return records.build_batch([(1_700_000_000_000, None, v.encode(), []) for v in values], base_offset=base_offset,
                               producer_id=4000, producer_epoch=producer_epoch, base_sequence=base_sequence,
                               partition_leader_epoch=leader_epoch, compression=compression)


def test_a_duplicate_names_the_batches_holding_it_on_every_node(tmp_path):
    cluster = TwoNodes(tmp_path)
    before = steady_batch(["steady:15"], 15, producer_epoch=0, base_sequence=15, leader_epoch=1)
    first = steady_batch(["steady:16"], 16, producer_epoch=0, base_sequence=16, leader_epoch=1)
    renumbered = steady_batch(["steady:16", "steady:17"], 17, producer_epoch=1, base_sequence=0, leader_epoch=2,
                              compression=CompressionType.GZIP)
    write_segment(cluster.partition_dir(1, "isr", 0), before, first, renumbered)
    write_segment(cluster.partition_dir(2, "isr", 0), before, first)
    acks = [ack("steady:15", 0, 15), ack("steady:16", 0, 16), ack("steady:17", 0, 18)]
    read = [Record(0, 15, "steady:15"), Record(0, 16, "steady:16"), Record(0, 17, "steady:16"),
            Record(0, 18, "steady:17")]
    verdict = judge(acks, read, dump=lambda values: duplicate_batches(cluster, "isr", 1, values))
    crc = records.read_header(first).crc
    assert verdict.duplicate_batches == [
        f"node 1 (leader) isr-0 00000000000000000000.log @{len(before)}: base offset 16, producer id 4000, "
        f"producer epoch 0, base sequence 16, 1 records, partition leader epoch 1, crc {crc:#010x}, "
        "values ['steady:16']",
        f"node 1 (leader) isr-0 00000000000000000000.log @{len(before) + len(first)}: base offset 17, producer id "
        f"4000, producer epoch 1, base sequence 0, 2 records, partition leader epoch 2, crc "
        f"{records.read_header(renumbered).crc:#010x}, values ['steady:16', 'steady:17']",
        f"node 2 isr-0 00000000000000000000.log @{len(before)}: base offset 16, producer id 4000, producer epoch 0, "
        f"base sequence 16, 1 records, partition leader epoch 1, crc {crc:#010x}, values ['steady:16']",
    ]
    assert "record batches on disk holding a duplicated value:\n  node 1 (leader) isr-0" in verdict.problems()


def test_the_dump_runs_only_for_duplicates_and_says_why_a_node_is_unreadable(tmp_path):
    def no_dump(values):
        raise AssertionError(f"dump called for {values}")

    assert judge([ack("c:0", 0, 0)], [Record(0, 0, "c:0")], dump=no_dump).problems() == ""
    cluster = TwoNodes(tmp_path)
    held = records.build_batch([(0, None, b"c:0", [])])
    write_segment(cluster.partition_dir(1, "t", 0), held, b"\x00" * 8 + (100).to_bytes(4, "big") + b"\x00" * 100)
    lines = duplicate_batches(cluster, "t", 1, {"c:0"})
    assert len(lines) == 2 and lines[0].startswith("node 1 (leader) t-0 00000000000000000000.log @0: base offset 0")
    assert lines[1] == ("node 1 (leader) t-0 00000000000000000000.log: unreadable (UnsupportedForMessageFormatError("
                        "'record batch magic 0: only v2 is supported'))")
