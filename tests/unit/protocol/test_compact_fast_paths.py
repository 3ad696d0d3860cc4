"""The readers' one-byte fast path for compact lengths and counts, at its edges: a first byte of 1 to 127 (strings,
bytes, records) or 1 to 64 (arrays of numbers) is read inline, anything else (null, a longer varint, a longer array)
by the general path; both give the same values, and a length past the end is still a DecodeError."""

import pytest

from wirebroker.protocol.messages.fetch import FetchResponse
from wirebroker.protocol.messages.metadata import MetadataResponse
from wirebroker.protocol.messages.produce import ProduceRequest
from wirebroker.protocol.primitives import DecodeError

EDGES = (0, 1, 62, 63, 64, 65, 126, 127, 128, 200, 20_000)


def _metadata(replicas: int, name_length: int, rack: str | None) -> MetadataResponse:
    partition = MetadataResponse.MetadataResponsePartition(
        partition_index=1, leader_id=2, replica_nodes=list(range(replicas)), isr_nodes=[7] * (replicas // 2),
        offline_replicas=[])
    topic = MetadataResponse.MetadataResponseTopic(name="t" * name_length, partitions=[partition])
    broker = MetadataResponse.MetadataResponseBroker(node_id=1, host="h" * name_length, port=9092, rack=rack)
    return MetadataResponse(brokers=[broker], cluster_id=None, controller_id=1, topics=[topic])


@pytest.mark.parametrize("size", EDGES)
def test_arrays_and_strings_of_every_edge_size_round_trip(size):
    for version in (8, 12):  # int32 lengths, compact lengths
        for rack in (None, "r" * size):
            message = _metadata(size, size, rack)
            wire = message.encode(version)
            assert MetadataResponse.decode(wire, version) == message


@pytest.mark.parametrize("size", EDGES)
def test_records_of_every_edge_size_are_a_view_of_the_input(size):
    records = bytes(i % 251 for i in range(size))
    partition = FetchResponse.PartitionData(partition_index=3, records=records, aborted_transactions=[
        FetchResponse.AbortedTransaction(producer_id=5, first_offset=6)] * (size % 3))
    message = FetchResponse(responses=[FetchResponse.FetchableTopicResponse(topic="t", partitions=[partition])])
    wire = message.encode(12)
    decoded = FetchResponse.decode(wire, 12)
    assert decoded == message
    assert isinstance(decoded.responses[0].partitions[0].records, memoryview)


def test_a_null_where_not_nullable_is_refused_on_either_path():
    wire = bytearray(_metadata(3, 3, None).encode(12))
    at = wire.index(b"\x04" + b"\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x02")  # the replica count, 3 + 1
    wire[at] = 0  # null
    with pytest.raises(DecodeError):
        MetadataResponse.decode(bytes(wire), 12)


@pytest.mark.parametrize("claimed", (5, 127, 300))
def test_a_last_length_past_the_end_is_refused(claimed):
    request = ProduceRequest(acks=1, timeout_ms=5, topic_data=[ProduceRequest.TopicProduceData(
        name="t", partition_data=[ProduceRequest.PartitionProduceData(index=0, records=b"abcd")])])
    wire = bytearray(request.encode(9))
    at = wire.index(b"\x05abcd")  # records: compact length 4 + 1
    cut = wire[:at] + (bytes([claimed]) if claimed < 128 else bytes([claimed & 0x7F | 0x80, claimed >> 7])) + b"ab"
    with pytest.raises(DecodeError):
        ProduceRequest.decode(bytes(cut), 9)
