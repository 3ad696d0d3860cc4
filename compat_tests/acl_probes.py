"""The requests of the ACL matrix (compat_tests/acl_matrix.py), each principal's answers as plain data: error
codes, visible names and authorized-operation bit sets, nothing that differs between two correct brokers.

probe() asks the data-path, group and describe APIs; probe_admin() the admin and transaction APIs, with
validate_only where a request would change what the other principal sees, and only refusable transactional ids.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tests.integration.raw_client import RawClient
from wirebroker.cluster.acls import (
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from wirebroker.protocol import records
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.add_partitions_to_txn import AddPartitionsToTxnRequest
from wirebroker.protocol.messages.alter_configs import AlterConfigsRequest
from wirebroker.protocol.messages.create_acls import CreateAclsRequest
from wirebroker.protocol.messages.create_partitions import CreatePartitionsRequest
from wirebroker.protocol.messages.create_topics import CreateTopicsRequest
from wirebroker.protocol.messages.delete_records import DeleteRecordsRequest
from wirebroker.protocol.messages.delete_topics import DeleteTopicsRequest
from wirebroker.protocol.messages.describe_configs import DescribeConfigsRequest
from wirebroker.protocol.messages.describe_producers import DescribeProducersRequest
from wirebroker.protocol.messages.describe_topic_partitions import (
    DescribeTopicPartitionsRequest,
)
from wirebroker.protocol.messages.elect_leaders import ElectLeadersRequest
from wirebroker.protocol.messages.fetch import FetchRequest
from wirebroker.protocol.messages.incremental_alter_configs import (
    IncrementalAlterConfigsRequest,
)
from wirebroker.protocol.messages.list_offsets import ListOffsetsRequest
from wirebroker.protocol.messages.metadata import MetadataRequest
from wirebroker.protocol.messages.offset_commit import OffsetCommitRequest
from wirebroker.protocol.messages.offset_delete import OffsetDeleteRequest
from wirebroker.protocol.messages.offset_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
)
from wirebroker.protocol.messages.produce import ProduceRequest
from wirebroker.protocol.messages.txn_offset_commit import TxnOffsetCommitRequest

OP, TYPE, PATTERN, PERMISSION = AclOperation, ResourceType, PatternType, AclPermissionType

# API keys
(PRODUCE, FETCH, LIST_OFFSETS, METADATA, OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR, DESCRIBE_GROUPS, LIST_GROUPS,
 SASL_HANDSHAKE, CREATE_TOPICS, DELETE_RECORDS, INIT_PRODUCER_ID, DESCRIBE_ACLS, CREATE_ACLS, DESCRIBE_CONFIGS,
 DESCRIBE_LOG_DIRS, SASL_AUTHENTICATE, DESCRIBE_CLUSTER) = (0, 1, 2, 3, 8, 9, 10, 15, 16, 17, 19, 21, 22, 29, 30,
                                                            32, 35, 36, 60)
USERS = {"alice": "alice-secret", "bob": "bob-secret"}
TOPICS = ("orders", "orders-eu", "payments", "secret", "public-a", "public-b")
GROUPS = ("team-a-group", "other-group")
DOOMED = {user: f"doomed-{user}" for user in USERS}  # a topic each principal tries to delete


# Answers that only say "not yet" (a coordinator or leader still being set up): asked again, not compared.
NOT_YET = frozenset({ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR,
                     ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.LEADER_NOT_AVAILABLE,
                     ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.CONCURRENT_TRANSACTIONS})
# Kafka's KRaft broker answers an auto-created topic UNKNOWN_TOPIC_OR_PARTITION until the controller has made it
# (wirebroker's single node creates it before answering): not an authorization answer, so asked again.
AUTO_CREATE_NOT_YET = NOT_YET | {ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
RETRY_S = 30.0


def until_ready(ask: Callable[[], Any], code_of: Callable[[Any], int], not_yet: frozenset[int] = NOT_YET) -> Any:
    """Ask again while the answer only says "not yet"."""
    deadline = time.monotonic() + RETRY_S
    while True:
        answer = ask()
        if code_of(answer) not in not_yet or time.monotonic() > deadline:
            return answer
        time.sleep(0.2)




def batch(transactional: bool = False) -> bytes:
    entries = [(int(time.time() * 1000), None, b"value", ())]
    if transactional:
        return records.build_batch(entries, producer_id=12345, producer_epoch=0, base_sequence=0, is_transactional=True)
    return records.build_batch(entries)


def produce(client: RawClient, topic: str, records_: bytes, transactional_id: str | None = None) -> int:
    response = client.request(PRODUCE, 9, transactional_id=transactional_id, acks=1, timeout_ms=10_000, topic_data=[
        ProduceRequest.TopicProduceData(name=topic, partition_data=[
            ProduceRequest.PartitionProduceData(index=0, records=records_)])])
    return response.responses[0].partition_responses[0].error_code


def commit(client: RawClient, group: str, *topics: str) -> dict[str, int]:
    response = client.request(OFFSET_COMMIT, 8, group_id=group, generation_id_or_member_epoch=-1, member_id="",
                              group_instance_id=None, topics=[
                                  OffsetCommitRequest.OffsetCommitRequestTopic(name=topic, partitions=[
                                      OffsetCommitRequest.OffsetCommitRequestPartition(
                                          partition_index=0, committed_offset=1, committed_leader_epoch=-1,
                                          committed_metadata="")]) for topic in topics])
    return {t.name: t.partitions[0].error_code for t in response.topics}




def probe(client: RawClient, user: str) -> dict[str, Any]:
    names = [*TOPICS, "missing-topic"]
    answers: dict[str, Any] = {}
    listing = client.request(METADATA, 12, topics=None, allow_auto_topic_creation=False,
                             include_topic_authorized_operations=True)
    answers["metadata.all"] = sorted(t.name for t in listing.topics if not t.name.startswith("__"))
    named = client.request(METADATA, 12, topics=[MetadataRequest.MetadataRequestTopic(name=n) for n in names],
                           allow_auto_topic_creation=False, include_topic_authorized_operations=True)
    answers["metadata.named"] = {t.name: [t.error_code, t.topic_authorized_operations] for t in named.topics}
    created = until_ready(lambda: client.request(METADATA, 12, topics=[MetadataRequest.MetadataRequestTopic(
        name=f"auto-{user}")], allow_auto_topic_creation=True), lambda r: r.topics[0].error_code, AUTO_CREATE_NOT_YET)
    answers["metadata.auto_create"] = created.topics[0].error_code
    answers["produce"] = {topic: produce(client, topic, batch()) for topic in TOPICS}
    answers["produce.transactional"] = {txn: produce(client, "payments", batch(True), txn)
                                        for txn in ("nobody-tx", None)}
    answers["fetch"] = {topic: fetch(client, topic, -1) for topic in TOPICS}
    answers["fetch.as_follower"] = {topic: fetch(client, topic, 1) for topic in ("orders", "payments")}
    offsets = client.request(LIST_OFFSETS, 7, replica_id=-1, isolation_level=0, topics=[
        ListOffsetsRequest.ListOffsetsTopic(name=topic, partitions=[
            ListOffsetsRequest.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1, timestamp=-1)])
        for topic in TOPICS])
    answers["list_offsets"] = {t.name: t.partitions[0].error_code for t in offsets.topics}
    configs = client.request(DESCRIBE_CONFIGS, 4, include_synonyms=False, include_documentation=False, resources=[
        *(DescribeConfigsRequest.DescribeConfigsResource(resource_type=2, resource_name=t, configuration_keys=None)
          for t in TOPICS),
        DescribeConfigsRequest.DescribeConfigsResource(resource_type=4, resource_name="0", configuration_keys=None)])
    answers["describe_configs"] = {f"{r.resource_type}:{r.resource_name}": r.error_code for r in configs.results}
    creation = client.request(CREATE_TOPICS, 7, timeout_ms=10_000, validate_only=True, topics=[
        CreateTopicsRequest.CreatableTopic(name=name, num_partitions=1, replication_factor=1)
        for name in ("alice-new", "bob-new", "orders-new")])
    answers["create_topics"] = {t.name: [t.error_code, t.topic_config_error_code] for t in creation.topics}
    deletion = client.request(DELETE_RECORDS, 2, timeout_ms=10_000, topics=[
        DeleteRecordsRequest.DeleteRecordsTopic(name=topic, partitions=[
            DeleteRecordsRequest.DeleteRecordsPartition(partition_index=0, offset=0)]) for topic in TOPICS])
    answers["delete_records"] = {t.name: t.partitions[0].error_code for t in deletion.topics}
    answers["find_coordinator"] = {
        f"{key_type}:{key}": until_ready(
            lambda key=key, key_type=key_type: client.request(FIND_COORDINATOR, 4, key_type=key_type,
                                                              coordinator_keys=[key]).coordinators[0].error_code,
            lambda code: code)
        for key_type, keys in ((0, GROUPS), (1, ("alice-tx", "bob-tx"))) for key in keys}
    answers["offset_commit"] = {group: commit(client, group, "orders", "payments") for group in GROUPS}
    answers["offset_fetch"] = {}
    for group in GROUPS:
        fetched = client.request(OFFSET_FETCH, 7, group_id=group, topics=None, require_stable=False)
        answers["offset_fetch"][group] = [fetched.error_code, sorted(t.name for t in fetched.topics)]
    described = client.request(DESCRIBE_GROUPS, 5, groups=list(GROUPS), include_authorized_operations=True)
    answers["describe_groups"] = {g.group_id: [g.error_code, g.authorized_operations] for g in described.groups}
    listed = client.request(LIST_GROUPS, 4, states_filter=[])
    answers["list_groups"] = [listed.error_code, sorted(g.group_id for g in listed.groups)]
    answers["init_producer_id"] = {
        str(txn): until_ready(lambda txn=txn: client.request(
            INIT_PRODUCER_ID, 4, transactional_id=txn, transaction_timeout_ms=60_000, producer_id=-1,
            producer_epoch=-1).error_code, lambda code: code)
        for txn in (None, "alice-tx", "bob-tx")}
    answers["describe_acls"] = client.request(DESCRIBE_ACLS, 3, resource_type_filter=1, resource_name_filter=None,
                                              pattern_type_filter=1, principal_filter=None, host_filter=None,
                                              operation=1, permission_type=1).error_code
    answers["create_acls"] = client.request(CREATE_ACLS, 3, creations=[CreateAclsRequest.AclCreation(
        principal=f"User:{user}", resource_type=TYPE.TOPIC, resource_name="anything", host="*",
        resource_pattern_type=PATTERN.LITERAL, operation=OP.READ, permission_type=PERMISSION.ALLOW)]
    ).results[0].error_code
    cluster = client.request(DESCRIBE_CLUSTER, 1, include_cluster_authorized_operations=True, endpoint_type=1)
    answers["describe_cluster"] = [cluster.error_code, cluster.cluster_authorized_operations]
    answers["describe_log_dirs"] = client.request(DESCRIBE_LOG_DIRS, 4, topics=None).error_code
    return answers


def fetch(client: RawClient, topic: str, replica_id: int) -> int:
    response = client.request(FETCH, 12, replica_id=replica_id, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                              isolation_level=0, session_id=0, session_epoch=-1, topics=[
                                  FetchRequest.FetchTopic(topic=topic, partitions=[FetchRequest.FetchPartition(
                                      partition=0, current_leader_epoch=-1, fetch_offset=0, log_start_offset=-1,
                                      partition_max_bytes=1 << 20)])])
    return response.responses[0].partitions[0].error_code




(DELETE_TOPICS, OFFSET_FOR_LEADER_EPOCH, ADD_PARTITIONS_TO_TXN, ADD_OFFSETS_TO_TXN, END_TXN, TXN_OFFSET_COMMIT,
 ALTER_CONFIGS, CREATE_PARTITIONS, DELETE_GROUPS, ELECT_LEADERS, INCREMENTAL_ALTER_CONFIGS,
 LIST_PARTITION_REASSIGNMENTS, OFFSET_DELETE, DESCRIBE_PRODUCERS, DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS,
 CONSUMER_GROUP_DESCRIBE, DESCRIBE_TOPIC_PARTITIONS) = (20, 23, 24, 25, 26, 28, 33, 37, 42, 43, 44, 46, 47, 61, 65,
                                                        66, 69, 75)
TOPIC_CONFIG, DESCRIBE_SCOPE = 2, ("orders", "payments", "secret")


def probe_admin(client: RawClient, user: str) -> dict[str, Any]:
    other_txn = "bob-tx" if user == "alice" else "alice-tx"  # a transactional id this principal may not write
    answers: dict[str, Any] = {}
    deleted = client.request(DELETE_TOPICS, 6, timeout_ms=10_000, topics=[
        DeleteTopicsRequest.DeleteTopicState(name=name) for name in (DOOMED[user], "secret", "missing-topic")])
    answers["delete_topics"] = {r.name: r.error_code for r in deleted.responses}
    grown = client.request(CREATE_PARTITIONS, 3, timeout_ms=10_000, validate_only=True, topics=[
        CreatePartitionsRequest.CreatePartitionsTopic(name=name, count=2, assignments=None)
        for name in DESCRIBE_SCOPE])
    answers["create_partitions"] = {r.name: r.error_code for r in grown.results}
    altered = client.request(INCREMENTAL_ALTER_CONFIGS, 1, validate_only=True, resources=[
        IncrementalAlterConfigsRequest.AlterConfigsResource(resource_type=TOPIC_CONFIG, resource_name=name, configs=[
            IncrementalAlterConfigsRequest.AlterableConfig(name="retention.ms", config_operation=0, value="86400000")])
        for name in DESCRIBE_SCOPE])
    answers["incremental_alter_configs"] = {r.resource_name: r.error_code for r in altered.responses}
    replaced = client.request(ALTER_CONFIGS, 2, validate_only=True, resources=[
        AlterConfigsRequest.AlterConfigsResource(resource_type=TOPIC_CONFIG, resource_name=name, configs=[
            AlterConfigsRequest.AlterableConfig(name="retention.ms", value="86400000")])
        for name in DESCRIBE_SCOPE])
    answers["alter_configs"] = {r.resource_name: r.error_code for r in replaced.responses}
    answers["delete_groups"] = {r.group_id: r.error_code for r in client.request(
        DELETE_GROUPS, 2, groups_names=list(GROUPS)).results}
    answers["offset_delete"] = client.request(OFFSET_DELETE, 0, group_id=GROUPS[0], topics=[
        OffsetDeleteRequest.OffsetDeleteRequestTopic(name="orders", partitions=[
            OffsetDeleteRequest.OffsetDeleteRequestPartition(partition_index=0)])]).error_code
    answers["end_txn"] = client.request(END_TXN, 3, transactional_id=other_txn, producer_id=1, producer_epoch=0,
                                        committed=True).error_code
    answers["add_offsets_to_txn"] = client.request(ADD_OFFSETS_TO_TXN, 3, transactional_id=other_txn, producer_id=1,
                                                   producer_epoch=0, group_id=GROUPS[0]).error_code
    txn_commit = client.request(TXN_OFFSET_COMMIT, 3, transactional_id=other_txn, group_id=GROUPS[0], producer_id=1,
                                producer_epoch=0, generation_id=-1, member_id="", group_instance_id=None, topics=[
                                    TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic(name="orders", partitions=[
                                        TxnOffsetCommitRequest.TxnOffsetCommitRequestPartition(
                                            partition_index=0, committed_offset=0, committed_leader_epoch=-1)])])
    answers["txn_offset_commit"] = txn_commit.topics[0].partitions[0].error_code
    added = client.request(ADD_PARTITIONS_TO_TXN, 3, v3_and_below_transactional_id=other_txn,
                           v3_and_below_producer_id=1, v3_and_below_producer_epoch=0, v3_and_below_topics=[
                               AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(name="orders", partitions=[0])])
    answers["add_partitions_to_txn"] = added.results_by_topic_v3_and_below[0].results_by_partition[0]\
        .partition_error_code
    described = client.request(DESCRIBE_TRANSACTIONS, 0, transactional_ids=["alice-tx", "bob-tx"])
    answers["describe_transactions"] = {s.transactional_id: s.error_code for s in described.transaction_states}
    listed = client.request(LIST_TRANSACTIONS, 1, state_filters=[], producer_id_filters=[], duration_filter=-1)
    answers["list_transactions"] = sorted(s.transactional_id for s in listed.transaction_states)
    producers = client.request(DESCRIBE_PRODUCERS, 0, topics=[
        DescribeProducersRequest.TopicRequest(name=name, partition_indexes=[0]) for name in DESCRIBE_SCOPE])
    answers["describe_producers"] = {t.name: t.partitions[0].error_code for t in producers.topics}
    epochs = client.request(OFFSET_FOR_LEADER_EPOCH, 4, replica_id=-1, topics=[
        OffsetForLeaderEpochRequest.OffsetForLeaderTopic(topic=name, partitions=[
            OffsetForLeaderEpochRequest.OffsetForLeaderPartition(partition=0, current_leader_epoch=-1,
                                                                 leader_epoch=0)])
        for name in DESCRIBE_SCOPE])
    answers["offset_for_leader_epoch"] = {t.topic: t.partitions[0].error_code for t in epochs.topics}
    answers["elect_leaders"] = client.request(ELECT_LEADERS, 2, election_type=0, timeout_ms=10_000, topic_partitions=[
        ElectLeadersRequest.TopicPartitions(topic="orders", partitions=[0])]).error_code
    answers["list_partition_reassignments"] = client.request(LIST_PARTITION_REASSIGNMENTS, 0, timeout_ms=10_000,
                                                             topics=None).error_code
    pages = client.request(DESCRIBE_TOPIC_PARTITIONS, 0, response_partition_limit=100, cursor=None, topics=[
        DescribeTopicPartitionsRequest.TopicRequest(name=name) for name in (*DESCRIBE_SCOPE, "missing-topic")])
    answers["describe_topic_partitions"] = {t.name: [t.error_code, t.topic_authorized_operations]
                                            for t in pages.topics}
    groups = client.request(CONSUMER_GROUP_DESCRIBE, 0, group_ids=list(GROUPS), include_authorized_operations=True)
    answers["consumer_group_describe"] = {g.group_id: g.error_code for g in groups.groups}
    return answers
