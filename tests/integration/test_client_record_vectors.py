"""RecordBatch test vectors made by a real client (librdkafka through confluent-kafka), read from our own log files.

confluent-kafka produces records with keys, null values and headers under every codec; the batches it sent are on
disk as it sent them (but for baseOffset and partitionLeaderEpoch), so decoding the segment files with
wirebroker.protocol.records must give back exactly the records sent, and a flipped byte anywhere in the CRC-covered
range of such a batch must be CORRUPT_MESSAGE.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wirebroker.protocol import records
from wirebroker.protocol.errors import CorruptMessageError

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
SENT = [
    (b"k0", b"v0", [("h0", b"x")]),
    (None, b"no key", []),
    (b"k2", None, [("h2", None), ("h2b", b"")]),
    (b"k3", b"compressible " * 2000, []),
]


def batches_on_disk(partition_dir: Path) -> list[bytes]:
    data = b"".join(p.read_bytes() for p in sorted(partition_dir.glob("*.log")))
    out, position = [], 0
    while position < len(data):
        header = records.read_header(data, position)
        out.append(data[position:position + header.size])
        position += header.size
    return out


@pytest.mark.parametrize("codec", CODECS)
def test_confluent_kafka_batches_decode_to_the_records_sent(broker, codec):
    from confluent_kafka import Producer

    topic = f"vectors-{codec}"
    producer = Producer({"bootstrap.servers": broker.bootstrap, "compression.type": codec, "linger.ms": 50,
                         "enable.idempotence": True})
    for key, value, headers in SENT:
        producer.produce(topic, key=key, value=value, headers=headers, timestamp=1_700_000_000_000)
    assert producer.flush(30) == 0
    batches = batches_on_disk(broker.data_dir / f"{topic}-0")
    decoded = []
    for batch in batches:
        header = records.read_header(batch)
        assert header.compression == CODECS[codec]
        assert header.producer_id >= 0  # idempotent: librdkafka stamped its producer id and sequence
        decoded += [(r.key, r.value, [(k, v) for k, v in r.headers])
                    for r in records.iter_records(batch, 0, header, 64 * 1024 * 1024)]
    assert decoded == [(k, v, h) for k, v, h in SENT]
    as_produced = bytearray(batches[0])
    records.assign_offsets(as_produced, 0, 0, -1)  # back to what a producer sends: base offset 0, no epoch
    records.validate_batches(memoryview(as_produced), 10_000_000)
    crc_covered_from = 21  # attributes onwards (after baseOffset, batchLength, epoch, magic, crc)
    for position in range(crc_covered_from, len(as_produced)):
        damaged = bytearray(as_produced)
        damaged[position] ^= 0x01
        with pytest.raises(CorruptMessageError):
            records.validate_batches(memoryview(damaged), 10_000_000)
