"""Cross-check of the generated codecs against kafka-python 3's independent codecs.

kafka-python 3 builds its own codecs from its own copy of Kafka's JSON schemas. For every message the two libraries
both define (requests, responses, the request/response headers and the consumer-protocol data records) and every
version both can speak, each case builds one message in both libraries from the same values, then asserts:

- both encode it to the same bytes;
- wirebroker decodes kafka-python's bytes, and kafka-python decodes wirebroker's, back to the values they were
  built from.

The values are drawn from kafka-python's schema (its `StructField` tree) by a seeded generator: a "minimal" variant
(every nullable field null, every array empty, no tagged field set) and two full variants (extreme and random
numbers, non-ASCII and long strings whose compact length needs two varint bytes, nulls at random, tagged fields set
at random). Hand-written cases at the end pin the behaviours a generator would only hit by chance.
"""

from __future__ import annotations

import importlib
import io
import random
import uuid
from typing import Any, Callable

import pytest

pytest.importorskip("kafka.protocol.api_message", reason="the cross-check needs kafka-python 3")

import kafka.protocol.admin  # noqa: E402
import kafka.protocol.consumer  # noqa: E402
import kafka.protocol.metadata  # noqa: E402
import kafka.protocol.producer  # noqa: E402
import kafka.protocol.sasl  # noqa: E402
from kafka.protocol.api_data import ApiData  # noqa: E402
from kafka.protocol.api_header import ApiHeader, RequestHeader, ResponseHeader  # noqa: E402
from kafka.protocol.api_message import ApiMessage  # noqa: E402
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription  # noqa: E402
from kafka.protocol.schemas.fields.array import ArrayField  # noqa: E402
from kafka.protocol.schemas.fields.struct import StructField  # noqa: E402
from kafka.protocol.schemas.fields.struct_array import StructArrayField  # noqa: E402

from wirebroker.protocol.messages import API_SPECS  # noqa: E402
from wirebroker.protocol.messages.api_versions import ApiVersionsResponse  # noqa: E402
from wirebroker.protocol.messages.fetch import FetchResponse  # noqa: E402
from wirebroker.protocol.messages.metadata import MetadataRequest, MetadataResponse  # noqa: E402
from wirebroker.protocol.messages.produce import ProduceRequest  # noqa: E402

Tree = dict[str, Any]

# kafka-python renames a few fields through its schema patches (and reads them as sets of bits, below).
RENAMED = {
    ("MetadataResponse", "authorized_operations"): "cluster_authorized_operations",
    ("MetadataResponseTopic", "authorized_operations"): "topic_authorized_operations",
    ("DescribeClusterResponse", "authorized_operations"): "cluster_authorized_operations",
}
INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
# kafka-python's "bitfield" is an int32 of operation bits read as a set; INT32_MIN (bit 31 alone) means null.
BITFIELD_NULL = -(2**31)
STRINGS = ("", "a", "tøpic-ü", "x" * 130)
VARIANTS = ("minimal", "full-1", "full-2")


# -- which messages and versions ---------------------------------------------------------------------------------


def kafka_python_classes() -> dict[str, type]:
    modules = (kafka.protocol.admin, kafka.protocol.consumer, kafka.protocol.metadata, kafka.protocol.producer,
               kafka.protocol.sasl)
    classes = {name: getattr(m, name) for m in modules for name in m.__all__}
    classes = {n: c for n, c in classes.items() if isinstance(c, type) and issubclass(c, (ApiMessage, ApiData))}
    classes.update(RequestHeader=RequestHeader, ResponseHeader=ResponseHeader)
    return classes


def wirebroker_classes() -> dict[str, type]:
    modules = {spec.request: spec.module for spec in API_SPECS.values()}
    modules.update({spec.response: spec.module for spec in API_SPECS.values()})
    modules.update(RequestHeader="request_header", ResponseHeader="response_header",
                   ConsumerProtocolAssignment="consumer_protocol_assignment",
                   ConsumerProtocolSubscription="consumer_protocol_subscription")
    return {n: getattr(importlib.import_module(f"wirebroker.protocol.messages.{m}"), n) for n, m in modules.items()}


def kafka_python_versions(kp_cls: type) -> range:
    """kafka-python encodes requests and responses from version 0 whatever its schema's floor (see ApiMessageData)."""
    low, high = kp_cls._valid_versions
    return range(0 if issubclass(kp_cls, ApiMessage) else low, high + 1)


def shared_cases() -> list[tuple[str, int]]:
    kp, wb = kafka_python_classes(), wirebroker_classes()
    cases = []
    for name in sorted(kp.keys() & wb.keys()):
        wb_versions = range(wb[name].MIN_VERSION, wb[name].MAX_VERSION + 1)
        cases += [(name, v) for v in kafka_python_versions(kp[name]) if v in wb_versions]
    return cases


KP_CLASSES = kafka_python_classes()
WB_CLASSES = wirebroker_classes()
CASES = shared_cases()


# -- the two libraries' encode and decode ------------------------------------------------------------------------


def header_is_flexible(kp_cls: type, version: int) -> bool:
    """kafka-python picks a header's version by flexibility: request header 1 or 2, response header 0 or 1."""
    return version >= kp_cls._flexible_versions[0]


def kp_encode(obj: Any, version: int) -> bytes:
    if isinstance(obj, ApiHeader):
        return obj.encode(flexible=header_is_flexible(type(obj), version))
    if isinstance(obj, ApiData):
        return obj.encode(version=version, header=False)
    return obj.encode(version=version)


def kp_decode(kp_cls: type, data: bytes, version: int) -> Any:
    if issubclass(kp_cls, ApiHeader):
        return kp_cls.decode(io.BytesIO(data), flexible=header_is_flexible(kp_cls, version))
    if issubclass(kp_cls, ApiData):
        return kp_cls.decode(data, version=version, header=False)
    return kp_cls.decode(data, version=version)


def wb_decode_whole(wb_cls: type, data: bytes, version: int) -> Any:
    obj, end = wb_cls.read(memoryview(data), 0, version)
    assert end == len(data), f"{wb_cls.__name__} v{version} read {end} of {len(data)} bytes"
    return obj


# -- field names and kinds ---------------------------------------------------------------------------------------


def wb_slot(wb_cls: type, field: Any) -> str:
    """wirebroker's attribute for kafka-python's field: the same Kafka name, maybe split into words differently."""
    name = RENAMED.get((wb_cls.__name__, field.name), field.name)
    folded = {slot.replace("_", ""): slot for slot in wb_cls.__slots__}
    return folded[name.replace("_", "")]


def is_struct_array(field: Any) -> bool:
    return isinstance(field, StructArrayField)


def is_scalar_array(field: Any) -> bool:
    return isinstance(field, ArrayField) and not is_struct_array(field)


def is_struct(field: Any) -> bool:
    return isinstance(field, StructField)


def fields_in(struct: Any, version: int) -> list[Any]:
    return [f for f in struct._fields if f.for_version_q(version)]


# -- the generator -------------------------------------------------------------------------------------------------


class Generator:
    """Values for one message at one version, as a tree of plain values keyed by kafka-python's field names."""

    def __init__(self, seed: str, minimal: bool, wb_top: type) -> None:
        self.rng = random.Random(seed)
        self.minimal = minimal
        self.wb_top = wb_top

    def struct(self, struct: Any, version: int, in_tagged: bool) -> Tree:
        tree: Tree = {}
        for field in fields_in(struct, version):
            tagged = field.tagged_field_q(version)
            # kafka-python writes a tagged field's value with no tagged fields of its own.
            if tagged and (self.minimal or in_tagged or self.rng.random() < 0.3):
                continue
            if field.nullable_for_version_q(version) and (self.minimal or self.rng.random() < 0.2):
                tree[field.name] = None
                continue
            value = self.field(field, version, in_tagged or tagged)
            if tagged and is_struct(field) and not is_struct_array(field) and self.is_default_struct(field, value):
                # kafka-python writes any non-null tagged struct; Kafka (and wirebroker) skip one equal to its
                # default. test_kafka_python_default_tagged_struct_is_read covers that difference.
                continue
            tree[field.name] = value
        return tree

    def field(self, field: Any, version: int, in_tagged: bool) -> Any:
        if is_struct_array(field):
            return [self.struct(field.array_of, version, in_tagged) for _ in range(self.count())]
        if is_scalar_array(field):
            return [self.scalar(field.array_of.type_str) for _ in range(self.count())]
        if is_struct(field):
            return self.struct(field, version, in_tagged)
        return self.scalar(field.type_str)

    def count(self) -> int:
        return 0 if self.minimal else self.rng.randint(0, 3)

    def scalar(self, kind: str) -> Any:
        rng = self.rng
        if kind in INT_RANGES:
            low, high = INT_RANGES[kind]
            return rng.choice((low, high, 0, max(low, -1), rng.randint(low, high)))
        if kind == "float64":
            return rng.choice((0.0, -2.5e10, rng.random()))
        if kind == "bool":
            return rng.random() < 0.5
        if kind == "uuid":
            return rng.randbytes(16)
        if kind == "string":
            return rng.choice(STRINGS)
        if kind in ("bytes", "records"):
            return rng.randbytes(rng.choice((0, 1, 7, 300)))
        if kind == "bitfield":
            return rng.choice((BITFIELD_NULL, 0, 0b1011000, 1 << 30))
        raise AssertionError(f"no generator for {kind}")

    def is_default_struct(self, field: Any, tree: Tree) -> bool:
        wb_cls = getattr(self.wb_top, field.type_str)
        return build_wb(field, tree, self.wb_top, wb_cls) == wb_cls()


# -- trees into objects --------------------------------------------------------------------------------------------


def bits_of(value: int) -> set[int] | None:
    if value == BITFIELD_NULL:
        return None
    unsigned = value & 0xFFFFFFFF
    return {bit for bit in range(32) if unsigned >> bit & 1}


def int_of(bits: set[int] | None) -> int:
    if bits is None:
        return BITFIELD_NULL
    unsigned = sum(1 << bit for bit in bits)
    return unsigned - (1 << 32) if unsigned >= 1 << 31 else unsigned


def kp_scalar(kind: str, value: Any) -> Any:
    if kind == "uuid":
        return uuid.UUID(bytes=value)
    if kind == "bitfield":
        return bits_of(value)
    return value


def build_kp(struct: Any, tree: Tree, version: int, kp_cls: type) -> Any:
    values = {name: kp_value(struct.fields[name], value, version) for name, value in tree.items()}
    if issubclass(kp_cls, ApiHeader):
        return kp_cls(**values)
    return kp_cls(version=version, **values)


def kp_value(field: Any, value: Any, version: int) -> Any:
    if is_struct_array(field) and value is not None:
        return [build_kp(field.array_of, v, version, field.data_class) for v in value]
    if is_scalar_array(field) and value is not None:
        return [kp_scalar(field.array_of.type_str, v) for v in value]
    if is_struct(field) and value is not None:
        return build_kp(field, value, version, field.data_class)
    return kp_scalar(field.type_str, value)


def build_wb(struct: Any, tree: Tree, wb_top: type, wb_cls: type) -> Any:
    obj = wb_cls()
    # Attributes set one by one: what the constructor does with None is not what this test is about.
    for name, value in tree.items():
        setattr(obj, wb_slot(wb_cls, struct.fields[name]), wb_value(struct.fields[name], value, wb_top))
    return obj


def wb_value(field: Any, value: Any, wb_top: type) -> Any:
    if value is None:
        return None
    if is_struct_array(field):
        return [build_wb(field.array_of, v, wb_top, getattr(wb_top, field.type_str)) for v in value]
    if is_scalar_array(field):
        return list(value)
    if is_struct(field):
        return build_wb(field, value, wb_top, getattr(wb_top, field.type_str))
    return value


# -- objects back into trees, over the fields of a reference tree --------------------------------------------------


def plain(kind: str, value: Any) -> Any:
    if kind == "uuid":
        return bytes(16) if value is None else (value.bytes if isinstance(value, uuid.UUID) else bytes(value))
    if kind in ("bytes", "records") and value is not None:
        return bytes(value)
    return value


def kp_attr(obj: Any, field: Any) -> Any:
    return getattr(obj, field.name)


def wb_attr(obj: Any, field: Any) -> Any:
    return getattr(obj, wb_slot(type(obj), field))


def read_tree(struct: Any, obj: Any, reference: Tree, attr: Callable[[Any, Any], Any]) -> Tree:
    """The plain values of `obj`'s fields that `reference` has, read through one library's `attr`."""
    return {
        name: plain_value(struct.fields[name], attr(obj, struct.fields[name]), reference[name], attr)
        for name in reference
    }


def plain_value(field: Any, value: Any, reference: Any, attr: Callable[[Any, Any], Any]) -> Any:
    if field.type_str == "bitfield" and not isinstance(value, int):
        return int_of(value)
    if value is None or reference is None:
        return value
    if is_struct_array(field):
        if len(value) != len(reference):
            return value
        return [read_tree(field.array_of, v, r, attr) for v, r in zip(value, reference)]
    if is_scalar_array(field):
        return [plain(field.array_of.type_str, v) for v in value]
    if is_struct(field):
        return read_tree(field, value, reference, attr)
    return plain(field.type_str, value)


# -- the generated cases -------------------------------------------------------------------------------------------


def values_for(name: str, version: int, variant: str) -> Tree:
    generator = Generator(f"{name}-v{version}-{variant}", variant == "minimal", WB_CLASSES[name])
    tree = generator.struct(KP_CLASSES[name]._struct, version, in_tagged=False)
    if name == "ApiVersionsResponse":
        # kafka-python reads an ApiVersionsResponse with an error as version 0, as Kafka's clients do.
        tree["error_code"] = 0
    return tree


@pytest.mark.parametrize("name,version", CASES, ids=[f"{n}-v{v}" for n, v in CASES])
def test_same_bytes_and_values_as_kafka_python(name: str, version: int) -> None:
    kp_cls, wb_cls = KP_CLASSES[name], WB_CLASSES[name]
    struct = kp_cls._struct
    for variant in VARIANTS:
        tree = values_for(name, version, variant)
        kp_bytes = kp_encode(build_kp(struct, tree, version, kp_cls), version)
        wb_bytes = build_wb(struct, tree, wb_cls, wb_cls).encode(version)
        assert wb_bytes == kp_bytes, f"{variant}: encodings differ"
        assert read_tree(struct, wb_decode_whole(wb_cls, kp_bytes, version), tree, wb_attr) == tree, variant
        assert read_tree(struct, kp_decode(kp_cls, wb_bytes, version), tree, kp_attr) == tree, variant


def test_the_cross_check_covers_the_core_apis_old_and_flexible() -> None:
    covered = set(CASES)
    for name, versions in {
        "ProduceRequest": (0, 3, 8, 9, 11), "ProduceResponse": (0, 9, 11),
        "FetchRequest": (4, 11, 12, 17), "FetchResponse": (4, 11, 12, 17),
        "MetadataRequest": (0, 8, 9, 12), "MetadataResponse": (0, 8, 9, 12),
        "ListOffsetsRequest": (1, 6, 10), "JoinGroupRequest": (0, 5, 6, 9), "SyncGroupResponse": (0, 4, 5),
        "HeartbeatRequest": (0, 4), "OffsetCommitRequest": (2, 7, 8, 9), "OffsetFetchResponse": (1, 5, 6, 9),
        "FindCoordinatorResponse": (0, 3, 4, 6), "ApiVersionsRequest": (0, 3, 4), "ApiVersionsResponse": (0, 3, 4),
        "RequestHeader": (1, 2), "ResponseHeader": (0, 1), "ConsumerProtocolSubscription": (0, 3),
    }.items():
        assert {(name, v) for v in versions} <= covered, name
    assert len(CASES) > 400


# -- hand-written cases --------------------------------------------------------------------------------------------


def test_metadata_request_null_topics_means_all_topics() -> None:
    request = MetadataRequest()
    request.topics = None
    kp_request = kafka.protocol.metadata.MetadataRequest(topics=None, allow_auto_topic_creation=True)
    for version in (1, 8, 9, 12):
        assert request.encode(version) == kp_encode(kp_request, version)
        assert MetadataRequest.decode(kp_encode(kp_request, version), version).topics is None


def test_produce_request_records_arrive_as_a_memoryview_of_the_input() -> None:
    kp = kafka.protocol.producer.ProduceRequest
    batch = bytes(range(256)) * 64
    topic = kp.TopicProduceData
    kp_request = kp(transactional_id=None, acks=-1, timeout_ms=30000, topic_data=[
        topic(name="t", partition_data=[topic.PartitionProduceData(index=0, records=batch)])])
    wire = kp_encode(kp_request, 9)
    request = ProduceRequest.decode(wire, 9)
    records = request.topic_data[0].partition_data[0].records
    assert isinstance(records, memoryview) and records == batch
    assert request.encode(9) == wire


def test_api_versions_response_tagged_fields_match() -> None:
    response = ApiVersionsResponse(
        api_keys=[ApiVersionsResponse.ApiVersion(api_key=0, min_version=3, max_version=11)],
        supported_features=[ApiVersionsResponse.SupportedFeatureKey(name="metadata.version", min_version=1,
                                                                    max_version=27)],
        finalized_features_epoch=7,
        finalized_features=[ApiVersionsResponse.FinalizedFeatureKey(name="metadata.version", max_version_level=27,
                                                                    min_version_level=27)],
        zk_migration_ready=True,
    )
    kp = KP_CLASSES["ApiVersionsResponse"]
    kp_response = kp(
        version=3, api_keys=[kp.ApiVersion(api_key=0, min_version=3, max_version=11)],
        supported_features=[kp.SupportedFeatureKey(name="metadata.version", min_version=1, max_version=27)],
        finalized_features_epoch=7,
        finalized_features=[kp.FinalizedFeatureKey(name="metadata.version", max_version_level=27,
                                                   min_version_level=27)],
        zk_migration_ready=True,
    )
    assert response.encode(3) == kp_encode(kp_response, 3)
    read_back = kp.decode(response.encode(3), version=3)
    assert (read_back.finalized_features_epoch, read_back.zk_migration_ready) == (7, True)
    assert [(f.name, f.max_version_level) for f in read_back.finalized_features] == [("metadata.version", 27)]


def test_kafka_python_default_tagged_struct_is_read() -> None:
    """kafka-python writes a tagged struct equal to its default, which Kafka's writers skip: it must still read."""
    kp = KP_CLASSES["FetchResponse"]
    topic = kp.FetchableTopicResponse
    leader = topic.PartitionData.LeaderIdAndEpoch(leader_id=-1, leader_epoch=-1)
    partition = topic.PartitionData(partition_index=0, high_watermark=5, records=b"", aborted_transactions=None,
                                    current_leader=leader)
    kp_bytes = kp_encode(kp(version=12, responses=[topic(topic="t", partitions=[partition])]), 12)
    response = wb_decode_whole(FetchResponse, kp_bytes, 12)
    read_partition = response.responses[0].partitions[0]
    assert read_partition.current_leader == FetchResponse.LeaderIdAndEpoch()
    assert read_partition.high_watermark == 5
    assert len(response.encode(12)) < len(kp_bytes)  # the default struct is not written back


def test_unknown_tagged_fields_reach_kafka_python() -> None:
    response = MetadataResponse(
        brokers=[MetadataResponse.MetadataResponseBroker(node_id=1, host="h", port=9093)],
        unknown_tagged_fields=[(90, b"\x01\x02"), (7000, b"x" * 200)],
    )
    kp_response = KP_CLASSES["MetadataResponse"].decode(response.encode(12), version=12)
    assert kp_response.unknown_tags == {"_90": b"\x01\x02", "_7000": b"x" * 200}
    assert kp_response.brokers[0].host == "h"


def test_compact_array_of_two_hundred_elements() -> None:
    topics = [MetadataRequest.MetadataRequestTopic(name=f"topic-{i}") for i in range(200)]
    kp = kafka.protocol.metadata.MetadataRequest
    kp_request = kp(topics=[kp.MetadataRequestTopic(name=f"topic-{i}") for i in range(200)],
                    allow_auto_topic_creation=False)
    assert MetadataRequest(topics=topics, allow_auto_topic_creation=False).encode(12) == kp_encode(kp_request, 12)


def test_consumer_protocol_assignment_matches() -> None:
    kp_assignment = ConsumerProtocolAssignment(version=3, user_data=None, assigned_partitions=[
        ConsumerProtocolAssignment.TopicPartition(topic="t", partitions=[0, 2])])
    wire = kp_encode(kp_assignment, 3)
    wb_cls = WB_CLASSES["ConsumerProtocolAssignment"]
    assignment = wb_decode_whole(wb_cls, wire, 3)
    assert [(tp.topic, tp.partitions) for tp in assignment.assigned_partitions] == [("t", [0, 2])]
    assert assignment.user_data is None
    assert assignment.encode(3) == wire
    assert ConsumerProtocolSubscription(version=0, topics=["a"], user_data=b"u").encode(version=0, header=False) == (
        WB_CLASSES["ConsumerProtocolSubscription"](topics=["a"], user_data=b"u").encode(0))
