"""Where an injected error goes (server/fault_responses.py): per partition, per topic, or at the top level, read from
each API's generated classes; and the rules' parsing (server/faults.py)."""

from __future__ import annotations

import pytest

from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.create_topics import CreateTopicsRequest
from wirebroker.protocol.messages.fetch import FetchRequest, FetchResponse
from wirebroker.protocol.messages.heartbeat import HeartbeatRequest
from wirebroker.protocol.messages.produce import ProduceRequest, ProduceResponse
from wirebroker.server import fault_responses
from wirebroker.server.faults import FaultRuleError, parse_rule

NOT_LEADER = ErrorCode.NOT_LEADER_OR_FOLLOWER
TOPIC_ID = bytes(range(16))


def _produce(*partitions_of: tuple[str, list[int]]) -> ProduceRequest:
    return ProduceRequest(acks=-1, topic_data=[
        ProduceRequest.TopicProduceData(name=name, partition_data=[
            ProduceRequest.PartitionProduceData(index=index) for index in indexes])
        for name, indexes in partitions_of])


def test_the_data_apis_carry_errors_per_partition_the_topic_apis_per_topic_the_rest_at_the_top():
    produce, fetch = fault_responses.shape_of(0), fault_responses.shape_of(1)
    assert (produce.request_topics, produce.request_partitions) == ("topic_data", "partition_data")
    assert (produce.response_topics, produce.response_partitions) == ("responses", "partition_responses")
    assert (fetch.request_partitions, fetch.partition_class) == ("partitions", FetchResponse.PartitionData)
    assert fault_responses.shape_of(CreateTopicsRequest.API_KEY).response_partitions is None
    assert fault_responses.shape_of(HeartbeatRequest.API_KEY) is None


def test_a_filtered_rule_answers_only_its_partitions_and_leaves_the_rest_to_the_handler():
    request = _produce(("t", [0, 1]), ("u", [0]))
    targets = fault_responses.match(fault_responses.shape_of(0), request, "t", 1, lambda topic_id: None)
    assert targets.partial and [(item.name, [p.index for p in parts]) for item, parts in targets.topics] == [
        ("t", [1])]
    injected = fault_responses.error_answer(0, targets, NOT_LEADER)
    answer = injected.responses[0].partition_responses[0]
    assert (injected.responses[0].name, answer.index, answer.error_code, answer.base_offset) == (
        "t", 1, NOT_LEADER, -1)

    fault_responses.split(0, request, targets)
    assert [(t.name, [p.index for p in t.partition_data]) for t in request.topic_data] == [("t", [0]), ("u", [0])]
    served = ProduceResponse(responses=[
        ProduceResponse.TopicProduceResponse(name="t", partition_responses=[
            ProduceResponse.PartitionProduceResponse(index=0)]),
        ProduceResponse.TopicProduceResponse(name="u", partition_responses=[
            ProduceResponse.PartitionProduceResponse(index=0)])])
    merged = fault_responses.merge(0, served, injected)
    assert [(t.name, [(p.index, p.error_code) for p in t.partition_responses]) for t in merged.responses] == [
        ("t", [(0, 0), (1, NOT_LEADER)]), ("u", [(0, 0)])]


def test_a_fetch_is_served_whole_and_the_matched_partition_replaced_by_its_error():
    request = FetchRequest(topics=[FetchRequest.FetchTopic(topic="t", partitions=[
        FetchRequest.FetchPartition(partition=0), FetchRequest.FetchPartition(partition=1)])])
    targets = fault_responses.match(fault_responses.shape_of(1), request, "t", 1, lambda topic_id: None)
    injected = fault_responses.error_answer(1, targets, NOT_LEADER)
    served = FetchResponse(responses=[FetchResponse.FetchableTopicResponse(topic="t", partitions=[
        FetchResponse.PartitionData(partition_index=0, high_watermark=5, records=b"r0"),
        FetchResponse.PartitionData(partition_index=1, high_watermark=5, records=b"r1")])])
    merged = fault_responses.merge(1, served, injected).responses
    assert [(p.partition_index, p.error_code, p.records) for t in merged for p in t.partitions] == [
        (0, 0, b"r0"), (1, NOT_LEADER, None)]


def test_a_fetch_by_topic_id_is_matched_by_name_and_answered_by_id():
    request = FetchRequest(topics=[FetchRequest.FetchTopic(topic_id=TOPIC_ID, partitions=[
        FetchRequest.FetchPartition(partition=3)])])
    targets = fault_responses.match(fault_responses.shape_of(1), request, "t", None,
                                    lambda topic_id: "t" if topic_id == TOPIC_ID else None)
    assert not targets.partial
    answer = fault_responses.error_answer(1, targets, NOT_LEADER).responses[0]
    assert (answer.topic_id, answer.partitions[0].partition_index, answer.partitions[0].error_code,
            answer.partitions[0].high_watermark) == (TOPIC_ID, 3, NOT_LEADER, -1)


def test_an_api_without_topics_gets_the_error_at_the_top_and_is_never_matched_by_a_topic():
    heartbeat = HeartbeatRequest(group_id="g")
    assert fault_responses.match(None, heartbeat, "t", None, lambda topic_id: None) is None
    targets = fault_responses.match(None, heartbeat, None, None, lambda topic_id: None)
    assert fault_responses.error_answer(HeartbeatRequest.API_KEY, targets, ErrorCode.REBALANCE_IN_PROGRESS
                                        ).error_code == ErrorCode.REBALANCE_IN_PROGRESS


@pytest.mark.parametrize(("fields", "named"), [
    ({"api": "Produce", "eror": 6}, "eror"),
    ({"api": "Prodce", "drop": True}, "Prodce"),
    ({"api": "Produce", "error": "NOT_A_CODE"}, "NOT_A_CODE"),
    ({"api": "Produce", "drop": True, "close": True}, "one of error, drop or close"),
    ({"api": "Produce"}, "needs error, drop, close or delay_ms"),
    ({"api": "Produce", "drop": True, "share": 0}, "share"),
    ({"api": "Produce", "drop": True, "count": 0}, "count"),
])
def test_a_bad_rule_is_refused_by_name(fields, named):
    with pytest.raises(FaultRuleError, match=named):
        parse_rule(1, fields)


def test_apis_and_errors_are_taken_by_name_either_spelling_or_by_number():
    rule = parse_rule(1, {"api": "LIST_OFFSETS", "error": 6, "count": 2})
    assert (rule.api_key, rule.error, rule.count) == (2, NOT_LEADER, 2)
    assert parse_rule(2, {"api": "ListOffsets", "error": "not_leader_or_follower"}).to_json()["error"] == (
        "NOT_LEADER_OR_FOLLOWER")
