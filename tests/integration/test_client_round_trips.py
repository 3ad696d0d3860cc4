"""Real clients produce records (keys, null values, headers, every codec) and consume them back identical.

Each client library sends 100,000 records, a fifth with each compression codec, to one topic per codec, and reads
them back: same keys, values, headers and timestamps, offsets contiguous from 0.
"""

from __future__ import annotations

import asyncio

RECORDS_PER_CLIENT = 100_000
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
PER_CODEC = RECORDS_PER_CLIENT // len(CODECS)
BASE_TIMESTAMP = 1_700_000_000_000


def expected_record(i: int) -> tuple[bytes | None, bytes | None, list[tuple[str, bytes]], int]:
    key = None if i % 7 == 0 and i % 11 else f"key-{i}".encode()  # never both null (clients refuse)
    value = None if i % 11 == 0 else f"value-{i}-".encode() * (1 + i % 5)
    headers = [("h", str(i).encode()), ("empty", b"")] if i % 3 == 0 else []
    return key, value, headers, BASE_TIMESTAMP + i


def check_consumed(records: list[tuple[int, bytes | None, bytes | None, list, int]]) -> None:
    assert len(records) == PER_CODEC
    for i, (offset, key, value, headers, timestamp) in enumerate(records):
        want_key, want_value, want_headers, want_timestamp = expected_record(i)
        assert offset == i
        assert (key, value, list(headers), timestamp) == (want_key, want_value, want_headers, want_timestamp), i


def test_kafka_python_round_trip(broker):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    for codec in CODECS:
        topic = f"kafka-python-{codec}"
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap, compression_type=None if codec == "none" else codec,
                                 linger_ms=5, batch_size=64 * 1024)
        for i in range(PER_CODEC):
            key, value, headers, timestamp = expected_record(i)
            producer.send(topic, key=key, value=value, headers=headers, timestamp_ms=timestamp)
        producer.flush()
        producer.close()
        consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest",
                                 enable_auto_commit=False, consumer_timeout_ms=10_000)
        consumer.assign([TopicPartition(topic, 0)])
        records = []
        for message in consumer:
            records.append((message.offset, message.key, message.value, message.headers, message.timestamp))
            if len(records) == PER_CODEC:
                break
        consumer.close()
        check_consumed(records)


def test_confluent_kafka_round_trip(broker):
    from confluent_kafka import Consumer, Producer, TopicPartition

    for codec in CODECS:
        topic = f"confluent-{codec}"
        producer = Producer({"bootstrap.servers": broker.bootstrap, "compression.type": codec, "linger.ms": 5})
        for i in range(PER_CODEC):
            key, value, headers, timestamp = expected_record(i)
            while True:
                try:
                    producer.produce(topic, key=key, value=value, headers=headers, timestamp=timestamp)
                    break
                except BufferError:
                    producer.poll(0.1)
        assert producer.flush(30) == 0
        consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"g-{topic}",
                             "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        consumer.assign([TopicPartition(topic, 0, 0)])
        records = []
        while len(records) < PER_CODEC:
            batch = consumer.consume(num_messages=10_000, timeout=10)
            assert batch, f"no records after {len(records)}"
            for message in batch:
                assert message.error() is None, message.error()
                records.append((message.offset(), message.key(), message.value(), message.headers() or [],
                                message.timestamp()[1]))
        consumer.close()
        check_consumed(records)


def test_aiokafka_round_trip(broker):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    async def run() -> None:
        for codec in CODECS:
            topic = f"aiokafka-{codec}"
            producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap,
                                        compression_type=None if codec == "none" else codec, linger_ms=5)
            await producer.start()
            try:
                batch = []
                for i in range(PER_CODEC):
                    key, value, headers, timestamp = expected_record(i)
                    batch.append(await producer.send(topic, key=key, value=value, headers=headers,
                                                     timestamp_ms=timestamp))
                await asyncio.gather(*batch)
            finally:
                await producer.stop()
            consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest",
                                        enable_auto_commit=False)
            await consumer.start()
            try:
                consumer.assign([TopicPartition(topic, 0)])
                await consumer.seek_to_beginning()
                records = []
                while len(records) < PER_CODEC:
                    fetched = await consumer.getmany(timeout_ms=10_000)
                    assert fetched, f"no records after {len(records)}"
                    for messages in fetched.values():
                        records += [(m.offset, m.key, m.value, list(m.headers), m.timestamp) for m in messages]
            finally:
                await consumer.stop()
            check_consumed(records)

    asyncio.run(run())
