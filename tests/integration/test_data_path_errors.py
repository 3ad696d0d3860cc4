"""Kafka's answers on the data path, asked with exact requests: byte-exact fetch, error codes, bad frames."""

from __future__ import annotations

import socket
import struct

from tests.integration.raw_client import RawClient
from wirebroker.protocol import records
from wirebroker.protocol.errors import ErrorCode

PRODUCE, FETCH, METADATA, API_VERSIONS = 0, 1, 3, 18


def create_topic(client: RawClient, name: str) -> None:
    from wirebroker.protocol.messages.metadata import MetadataRequest

    response = client.request(METADATA, 9, topics=[MetadataRequest.MetadataRequestTopic(name=name)],
                              allow_auto_topic_creation=True)
    assert response.topics[0].error_code == ErrorCode.NONE


def produce(client: RawClient, topic: str, batch: bytes, version: int = 9, acks: int = -1):
    from wirebroker.protocol.messages.produce import ProduceRequest as P

    response = client.request(PRODUCE, version, acks=acks, timeout_ms=5000, topic_data=[
        P.TopicProduceData(name=topic, partition_data=[P.PartitionProduceData(index=0, records=batch)])])
    return response.responses[0].partition_responses[0]


def fetch(client: RawClient, topic: str, offset: int, version: int = 12):
    from wirebroker.protocol.messages.fetch import FetchRequest as F

    response = client.request(FETCH, version, replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=10_000_000,
                              topics=[F.FetchTopic(topic=topic, partitions=[
                                  F.FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=10_000_000)])])
    return response.responses[0].partitions[0]


def a_batch(count: int = 3, compression: int = 0, value_size: int = 10) -> bytes:
    return records.build_batch([(1_700_000_000_000 + i, b"k%d" % i, b"v" * value_size, [("h", b"x")])
                                for i in range(count)], compression=compression)


def test_fetched_bytes_are_the_produced_bytes_but_offset_and_epoch(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "exact")
        sent = [a_batch(3, codec) for codec in (0, 1, 2, 3, 4)]
        for batch in sent:
            assert produce(client, "exact", batch).error_code == ErrorCode.NONE
        data = bytes(fetch(client, "exact", 0).records)
    position, next_offset = 0, 0
    for batch in sent:
        got = data[position:position + len(batch)]
        header = records.read_header(got)
        assert header.base_offset == next_offset and header.partition_leader_epoch == 0
        # baseOffset (8 bytes) and partitionLeaderEpoch (4 bytes after the 4-byte length) are the broker's.
        assert got[8:12] == batch[8:12] and got[16:] == batch[16:]
        position += len(batch)
        next_offset += 3
    assert position == len(data)


def test_corrupt_batch_is_corrupt_message_and_appends_nothing(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "corrupt")
        batch = bytearray(a_batch())
        batch[-1] ^= 0xFF
        assert produce(client, "corrupt", bytes(batch)).error_code == ErrorCode.CORRUPT_MESSAGE
        partition = fetch(client, "corrupt", 0)
        assert partition.error_code == ErrorCode.NONE and partition.high_watermark == 0 and not partition.records


def test_batch_over_message_max_bytes_is_message_too_large(broker_factory):
    broker = broker_factory(**{"message.max.bytes": "2000"})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "large")
        assert produce(client, "large", a_batch(1, value_size=5000)).error_code == ErrorCode.MESSAGE_TOO_LARGE
        assert produce(client, "large", a_batch(1, value_size=100)).error_code == ErrorCode.NONE


def test_unknown_topic_with_auto_create_off(broker_factory):
    from wirebroker.protocol.messages.metadata import MetadataRequest

    broker = broker_factory(**{"auto.create.topics.enable": "false"})
    with RawClient(broker.bootstrap) as client:
        response = client.request(METADATA, 9, topics=[MetadataRequest.MetadataRequestTopic(name="nope")])
        assert response.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert produce(client, "nope", a_batch()).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_produce_never_auto_creates(broker):
    with RawClient(broker.bootstrap) as client:
        assert produce(client, "not-yet", a_batch()).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_fetch_out_of_range(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "range")
        produce(client, "range", a_batch(3))
        assert fetch(client, "range", 3).error_code == ErrorCode.NONE  # the log end offset itself is in range
        assert fetch(client, "range", 4).error_code == ErrorCode.OFFSET_OUT_OF_RANGE


def test_api_versions_newer_than_known_gets_its_own_range_at_v0_and_unsupported_version(broker):
    with RawClient(broker.bootstrap) as client:
        # ApiVersions v127, request header v2 as clients send it; the answer is v0 with error 35.
        client.send_frame(struct.pack(">hhi", API_VERSIONS, 127, 42) + b"\x00\x04test" + b"\x00" + b"\x00\x00\x00")
        frame = client.read_frame()
    from wirebroker.protocol.messages.api_versions import ApiVersionsResponse

    assert struct.unpack_from(">i", frame)[0] == 42
    response = ApiVersionsResponse.decode(frame[4:], 0)
    assert response.error_code == ErrorCode.UNSUPPORTED_VERSION
    # Only ApiVersions' own range, as Kafka answers it (ApiVersionsRequest.getErrorResponse): the client asks again
    # at v4 and gets the whole list with the features (franz-go used a full v0 list as it was, without asking again).
    assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(API_VERSIONS, 0, 4)]


def test_api_versions_v3_refuses_a_software_name_kafka_would_refuse_every_time_it_is_asked(broker):
    # KIP-511's pattern, as Kafka's ApiVersionsRequest.isValid; asked twice, the second answer comes from the cache.
    with RawClient(broker.bootstrap) as client:
        for _ in range(2):
            for name, version in (("bad name", "1"), ("ok", "-1"), ("-x", "1")):
                answer = client.request(API_VERSIONS, 3, client_software_name=name, client_software_version=version)
                assert answer.error_code == ErrorCode.INVALID_REQUEST, (name, version)
            answer = client.request(API_VERSIONS, 3, client_software_name="apache-kafka-java",
                                    client_software_version="4.3.1")
            assert answer.error_code == ErrorCode.NONE
            assert answer.api_keys


def test_garbage_and_oversized_frames_close_only_that_connection(broker):
    with RawClient(broker.bootstrap) as healthy:
        for bad in (b"\x7f\xff\xff\xff" + b"x" * 10,  # claims 2 GiB
                    b"\xff\xff\xff\xf0",  # negative size
                    struct.pack(">i", 12) + b"\x00\x03\x00\x09\xff\xff\xff\xff\x7f\xff\xff\xff",  # bad header
                    struct.pack(">i", 8) + b"\x00\x03"):  # truncated, then closed by us
            with socket.create_connection(("127.0.0.1", broker.port), timeout=10) as sock:
                sock.sendall(bad)
                if bad.startswith(struct.pack(">i", 8)):
                    continue
                sock.settimeout(10)
                assert sock.recv(100) == b"", "the broker should close a connection sending garbage"
        response = healthy.request(API_VERSIONS, 3, client_software_name="t", client_software_version="1")
        assert response.error_code == ErrorCode.NONE
    assert "closing connection" in broker.log_text() or "clos" in broker.log_text().lower()
