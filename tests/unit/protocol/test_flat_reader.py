"""The flat Produce reader (codegen/flat.py) the broker's handler reads: the same partitions, in the same order, as
the full reader, at every version; the same refusals of cut or hostile input; unknown tagged fields skipped."""

import pytest

from wirebroker.protocol.api_messages import broker_request_class, request_class
from wirebroker.protocol.messages.produce import FlatProduceRequest, ProduceRequest
from wirebroker.protocol.primitives import DecodeError

_Topic = ProduceRequest.TopicProduceData
_Partition = ProduceRequest.PartitionProduceData
TOPIC_ID_VERSION = 13


def _request(version: int, tagged: bool = False) -> ProduceRequest:
    tags = [(7, b"\x01\x02")] if tagged else None
    topics = []
    for t, name in enumerate(("orders", "payments", "orders")):  # a topic twice, as a client may send it
        topic = _Topic(partition_data=[_Partition(index=i, records=bytes([t, i]) * (40 * i + 1),
                                                  unknown_tagged_fields=tags) for i in range(3)],
                       unknown_tagged_fields=tags)
        if version >= TOPIC_ID_VERSION:
            topic.topic_id = bytes([t + 1]) * 16
        else:
            topic.name = name
        topics.append(topic)
    topics[1].partition_data[2].records = None
    return ProduceRequest(transactional_id="tx" if version >= 3 else None, acks=-1, timeout_ms=1500,
                          topic_data=topics, unknown_tagged_fields=tags)


def _flattened(request: ProduceRequest, version: int) -> list[tuple]:
    return [(t.topic_id if version >= TOPIC_ID_VERSION else t.name, p.index,
             None if p.records is None else bytes(p.records)) for t in request.topic_data for p in t.partition_data]


@pytest.mark.parametrize("version", range(ProduceRequest.MIN_VERSION, ProduceRequest.MAX_VERSION + 1))
def test_flat_reads_what_the_full_reader_reads(version):
    wire = _request(version).encode(version)
    full = ProduceRequest.decode(wire, version)
    flat, end = FlatProduceRequest.read(memoryview(wire), 0, version)
    assert end == len(wire)
    assert (flat.transactional_id, flat.acks, flat.timeout_ms) == (full.transactional_id, -1, 1500)
    got = [(topic, index, None if records is None else bytes(records)) for topic, index, records in flat.partition_data]
    assert got == _flattened(full, version)
    assert isinstance(flat.partition_data[0][2], memoryview)  # records stay views of the frame


@pytest.mark.parametrize("version", range(ProduceRequest.FIRST_FLEXIBLE_VERSION, ProduceRequest.MAX_VERSION + 1))
def test_flat_skips_unknown_tagged_fields(version):
    wire = _request(version, tagged=True).encode(version)
    flat, end = FlatProduceRequest.read(wire, 0, version)
    assert end == len(wire)
    assert [(t, i) for t, i, _ in flat.partition_data] == [(t, i) for t, i, _ in
                                                           _flattened(ProduceRequest.decode(wire, version), version)]


@pytest.mark.parametrize("version", [3, 8, 9, 13])
def test_flat_refuses_what_the_full_reader_refuses(version):
    wire = _request(version, tagged=version >= 9).encode(version)
    for cut in range(len(wire)):
        refusals = []
        for reader in (ProduceRequest, FlatProduceRequest):
            try:
                reader.decode(wire[:cut], version)
                refusals.append(False)
            except DecodeError:
                refusals.append(True)
        assert refusals[0] == refusals[1], f"cut at {cut}"


def test_the_broker_reads_produce_flat_and_the_rest_whole():
    assert broker_request_class(0) is FlatProduceRequest
    assert broker_request_class(1) is request_class(1)
    with pytest.raises(TypeError):
        FlatProduceRequest.read(_request(9).encode(9), 0, 9)[0].encode(9)  # read only
