"""What the failover verdict adds when it finds a value read twice: every record batch on disk that holds one, read
from each replica's segment files, with the producer state fields that tell the two possible causes apart.

Copies in batches with one producer id, epoch and base sequence (and, for a resend of the same bytes, one CRC) are a
retried batch the broker appended twice; copies under another producer id or epoch, or at another sequence, were
renumbered by the client. Read only when a verdict finds duplicates, so a passing run costs nothing.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from wirebroker.log.batch_records import MAX_DECOMPRESSED_RECORDS_BYTES
from wirebroker.log.file_records import FileRecords
from wirebroker.protocol.records import iter_records

SHOWN_VALUES = 12  # a batch's values listed in full up to this many; a longer one shows its first and last few


def batches_holding(directory: Path, values: Collection[str]) -> list[str]:
    """One line per record batch in the partition directory's segment files that holds any of `values`; a segment
    that cannot be read to its end adds a line saying why, after the batches found before the fault."""
    wanted, lines = set(values), []
    for path in sorted(directory.glob("*.log")):
        segment = FileRecords(str(path), writable=False)
        try:
            for batch in segment.batches(with_data=True):
                header = batch.header
                held = [_text(r.value) for r in iter_records(batch.data, 0, header, MAX_DECOMPRESSED_RECORDS_BYTES)]
                if wanted.isdisjoint(held):
                    continue
                shown = held if len(held) <= SHOWN_VALUES else [
                    *held[:SHOWN_VALUES // 2], f"... {len(held) - SHOWN_VALUES} more ...", *held[-SHOWN_VALUES // 2:]]
                lines.append(f"{path.name} @{batch.position}: base offset {header.base_offset}, producer id "
                             f"{header.producer_id}, producer epoch {header.producer_epoch}, base sequence "
                             f"{header.base_sequence}, {header.records_count} records, partition leader epoch "
                             f"{header.partition_leader_epoch}, crc {header.crc:#010x}, values {shown}")
        except Exception as exc:  # noqa: BLE001 - a diagnostic on a failure path: say it, never mask the verdict
            lines.append(f"{path.name}: unreadable ({exc!r})")
        finally:
            segment.close()
    return lines


def duplicate_batches(cluster, topic: str, partitions: int, values: Collection[str]) -> list[str]:
    """`batches_holding` on every broker of a ClusterProcess, for each partition, each line naming its node (and
    whether ZooKeeper names it the leader)."""
    lines = []
    for partition in range(partitions):
        try:
            leader = cluster.partition_state(topic, partition)["leader"]
        except Exception as exc:  # noqa: BLE001 - as in batches_holding
            leader = None
            lines.append(f"{topic}-{partition}: leader unknown ({exc!r})")
        for node_id in cluster.node_ids:
            where = f"node {node_id}{' (leader)' if node_id == leader else ''} {topic}-{partition}"
            lines += [f"{where} {line}" for line in batches_holding(
                cluster.partition_dir(node_id, topic, partition), values)]
    return lines


def _text(value: bytes | None) -> str:
    return "null" if value is None else value.decode(errors="replace")
