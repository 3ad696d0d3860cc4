"""The failover tests' verdict: what counts as lost, duplicated, out of order; percentiles; failover samples."""

from __future__ import annotations

from tests.integration.failover_workload import (
    Ack,
    Record,
    failover_seconds,
    judge,
    percentile,
)


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
