"""Crash safety: acknowledged records survive kill -9, torn tails are repaired, idempotent retries never duplicate."""

from __future__ import annotations

import os
import random
import threading
import time

from tests.integration.broker_process import BrokerProcess
from tests.integration.raw_client import RawClient
from tests.integration.test_data_path_errors import a_batch, create_topic, fetch, produce
from wirebroker.protocol import records
from wirebroker.protocol.errors import ErrorCode


def read_all(client: RawClient, topic: str) -> list[records.Record]:
    """Every record of partition 0 from offset 0, decoded."""
    out: list[records.Record] = []
    offset = 0
    while True:
        partition = fetch(client, topic, offset)
        assert partition.error_code == ErrorCode.NONE
        data = bytes(partition.records)
        if not data:
            return out
        position = 0
        while position + records.BATCH_HEADER_SIZE <= len(data):
            header = records.read_header(data, position)
            if position + header.size > len(data):
                break
            out += list(records.iter_records(data, position, header, 64 * 1024 * 1024))
            position += header.size
            offset = header.next_offset


def test_acknowledged_records_survive_kill_9(tmp_path):
    broker = BrokerProcess(tmp_path / "data", {"log.flush.interval.messages": "1"}).start()
    acknowledged: list[bytes] = []
    stop = threading.Event()

    def produce_until_killed() -> None:
        try:
            with RawClient(broker.bootstrap) as client:
                create_topic(client, "durable")
                i = 0
                while not stop.is_set():
                    value = b"record-%d" % i
                    batch = records.build_batch([(int(time.time() * 1000), None, value, [])])
                    if produce(client, "durable", batch, acks=1).error_code == ErrorCode.NONE:
                        acknowledged.append(value)
                    i += 1
        except (ConnectionError, OSError):
            pass  # the broker was killed mid-request: that record was never acknowledged

    producer = threading.Thread(target=produce_until_killed)
    producer.start()
    time.sleep(3)
    broker.kill()
    stop.set()
    producer.join(10)
    assert len(acknowledged) > 50
    broker.start()
    with RawClient(broker.bootstrap) as client:
        values = [r.value for r in read_all(client, "durable")]
    # Every acknowledged record, in order, once; at most the one in flight at the kill may follow.
    assert values[: len(acknowledged)] == acknowledged
    assert len(values) - len(acknowledged) <= 1
    broker.stop()


def _tear(segment_log: str, how: str, rng: random.Random) -> None:
    size = os.path.getsize(segment_log)
    if how == "truncate":
        os.truncate(segment_log, rng.randrange(1, size))
    elif how == "garbage":
        with open(segment_log, "ab") as f:
            f.write(rng.randbytes(rng.randrange(1, 500)))
    elif how == "flip":
        with open(segment_log, "r+b") as f:
            f.seek(size - rng.randrange(1, 40))
            byte = f.read(1)
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([byte[0] ^ 0x10]))
    elif how == "no-index":
        os.remove(segment_log.replace(".log", ".index"))


def test_torn_tails_are_truncated_to_the_last_valid_batch(tmp_path):
    rng = random.Random(7)
    broker = BrokerProcess(tmp_path / "data").start()
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "torn")
        for _ in range(20):
            assert produce(client, "torn", a_batch(5)).error_code == ErrorCode.NONE
    segment_log = str(tmp_path / "data" / "torn-0" / "00000000000000000000.log")
    for how in ["truncate", "garbage", "flip", "no-index", "truncate", "garbage"]:
        broker.stop()
        _tear(segment_log, how, rng)
        broker.start()
        with RawClient(broker.bootstrap) as client:
            batches = read_all(client, "torn")
            offsets = [r.offset for r in batches]
            assert offsets == list(range(len(offsets))), how
            next_offset = len(offsets)
            appended = produce(client, "torn", a_batch(5))
            assert appended.error_code == ErrorCode.NONE and appended.base_offset == next_offset, how
    broker.stop()


def test_idempotent_retry_across_restart_is_not_duplicated(tmp_path):
    broker = BrokerProcess(tmp_path / "data").start()
    producer_id, epoch = 4242, 0
    now = int(time.time() * 1000)  # producers idle past producer.id.expiration.ms are forgotten, as in Kafka
    batch = records.build_batch([(now, b"k", b"once", [])], producer_id=producer_id, producer_epoch=epoch,
                                base_sequence=0)
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "idem")
        first = produce(client, "idem", batch)
        assert first.error_code == ErrorCode.NONE
    broker.kill()  # no clean shutdown: the producer state must come back from the log and snapshots
    broker.start()
    with RawClient(broker.bootstrap) as client:
        retry = produce(client, "idem", batch)
        assert retry.error_code == ErrorCode.NONE and retry.base_offset == first.base_offset
        assert [r.value for r in read_all(client, "idem")] == [b"once"]
        gap = records.build_batch([(now, b"k", b"gap", [])], producer_id=producer_id, producer_epoch=epoch,
                                  base_sequence=5)
        assert produce(client, "idem", gap).error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    broker.stop()
