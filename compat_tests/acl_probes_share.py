"""The ACL matrix's probes of the SCRAM credential and share-group APIs (compat_tests/acl_matrix.py): each principal's
answers as plain data, as compat_tests/acl_probes.py gives them for the other APIs.

Every probe is one a principal is refused somewhere, or answered before anything but authorization can differ:
DescribeUserScramCredentials (DESCRIBE on the cluster, with Kafka's error message), AlterUserScramCredentials (ALTER
on the cluster); ShareGroupHeartbeat (READ on the group, DESCRIBE on the subscribed topics), ShareGroupDescribe and
DescribeShareGroupOffsets (DESCRIBE), ShareFetch and ShareAcknowledge (READ on the group and the topics),
AlterShareGroupOffsets (READ), DeleteShareGroupOffsets (DELETE), the share-state APIs 83-87 and FindCoordinator for
a share-partition key (CLUSTER_ACTION); and the error message of whole requests refused (none where Kafka keeps its
default one to itself, the default where Kafka writes it out).
"""

from __future__ import annotations

import base64
from typing import Any

from tests.integration.raw_client import RawClient
from wirebroker.cluster.acls import (
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.alter_share_group_offsets import (
    AlterShareGroupOffsetsRequest,
)
from wirebroker.protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
)
from wirebroker.protocol.messages.create_acls import CreateAclsRequest
from wirebroker.protocol.messages.delete_acls import DeleteAclsRequest
from wirebroker.protocol.messages.delete_share_group_offsets import (
    DeleteShareGroupOffsetsRequest,
)
from wirebroker.protocol.messages.delete_share_group_state import (
    DeleteShareGroupStateRequest,
)
from wirebroker.protocol.messages.describe_quorum import DescribeQuorumRequest
from wirebroker.protocol.messages.describe_share_group_offsets import (
    DescribeShareGroupOffsetsRequest,
)
from wirebroker.protocol.messages.describe_user_scram_credentials import (
    DescribeUserScramCredentialsRequest,
)
from wirebroker.protocol.messages.initialize_share_group_state import (
    InitializeShareGroupStateRequest,
)
from wirebroker.protocol.messages.metadata import MetadataRequest
from wirebroker.protocol.messages.read_share_group_state import (
    ReadShareGroupStateRequest,
)
from wirebroker.protocol.messages.read_share_group_state_summary import (
    ReadShareGroupStateSummaryRequest,
)
from wirebroker.protocol.messages.share_acknowledge import ShareAcknowledgeRequest
from wirebroker.protocol.messages.share_fetch import ShareFetchRequest
from wirebroker.protocol.messages.write_share_group_state import (
    WriteShareGroupStateRequest,
)

(METADATA, FIND_COORDINATOR, DESCRIBE_ACLS, DESCRIBE_QUORUM, CREATE_ACLS, DELETE_ACLS, ALTER_PARTITION_REASSIGNMENTS,
 LIST_PARTITION_REASSIGNMENTS, DESCRIBE_USER_SCRAM_CREDENTIALS, ALTER_USER_SCRAM_CREDENTIALS, DESCRIBE_CLUSTER,
 CONSUMER_GROUP_HEARTBEAT, SHARE_GROUP_HEARTBEAT, SHARE_GROUP_DESCRIBE, SHARE_FETCH, SHARE_ACKNOWLEDGE,
 INITIALIZE_SHARE_GROUP_STATE, READ_SHARE_GROUP_STATE, WRITE_SHARE_GROUP_STATE, DELETE_SHARE_GROUP_STATE,
 READ_SHARE_GROUP_STATE_SUMMARY, DESCRIBE_SHARE_GROUP_OFFSETS, ALTER_SHARE_GROUP_OFFSETS, DELETE_SHARE_GROUP_OFFSETS) = (
    3, 10, 29, 55, 30, 31, 45, 46, 50, 51, 60, 68, 76, 77, 78, 79, 83, 84, 85, 86, 87, 90, 91, 92)
SHARE_GROUP = "team-a-share"  # alice may READ it (the PREFIXED team-a binding), bob nothing
SHARE_TOPICS = ("orders", "public-b")  # alice may READ orders, not public-b; bob may READ both
SCRAM_SHA_256 = 1
AUTHORIZATION_FAILURES = frozenset({ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.GROUP_AUTHORIZATION_FAILED,
                                    ErrorCode.CLUSTER_AUTHORIZATION_FAILED})
MEMBER_ID = "aclmatrixmember0000000"  # a client-generated member id (KIP-932), 22 characters


def probe_share(client: RawClient, user: str, ids: dict[str, bytes]) -> dict[str, Any]:
    """`ids`: topic_ids(), by name."""
    answers: dict[str, Any] = {}
    described = client.request(DESCRIBE_USER_SCRAM_CREDENTIALS, 0, users=[
        DescribeUserScramCredentialsRequest.UserName(name=user)])
    answers["describe_user_scram_credentials"] = [
        described.error_code, described.error_message,
        [[r.user, r.error_code, r.error_message] for r in described.results]]
    altered = client.request(ALTER_USER_SCRAM_CREDENTIALS, 0, upsertions=[], deletions=[
        AlterUserScramCredentialsRequest.ScramCredentialDeletion(name=user, mechanism=SCRAM_SHA_256)])
    answers["alter_user_scram_credentials"] = [[r.user, r.error_code] for r in altered.results]
    answers["share_group_heartbeat"] = client.request(
        SHARE_GROUP_HEARTBEAT, 1, group_id=SHARE_GROUP, member_id=MEMBER_ID, member_epoch=0, rack_id=None,
        subscribed_topic_names=["public-b"]).error_code
    groups = client.request(SHARE_GROUP_DESCRIBE, 1, group_ids=[SHARE_GROUP, "other-group"],
                            include_authorized_operations=False)
    answers["share_group_describe"] = {g.group_id: g.error_code for g in groups.groups}
    fetched = client.request(SHARE_FETCH, 1, group_id=SHARE_GROUP, member_id=MEMBER_ID, share_session_epoch=0,
                             max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, max_records=10, batch_size=10, topics=[
                                 ShareFetchRequest.FetchTopic(topic_id=ids[name], partitions=[
                                     ShareFetchRequest.FetchPartition(partition_index=0, acknowledgement_batches=[])])
                                 for name in SHARE_TOPICS], forgotten_topics_data=[])
    answers["share_fetch"] = [fetched.error_code, _refused(_partition_codes(fetched.responses, ids))]
    acked = client.request(SHARE_ACKNOWLEDGE, 1, group_id=SHARE_GROUP, member_id=MEMBER_ID, share_session_epoch=1,
                           topics=[ShareAcknowledgeRequest.AcknowledgeTopic(topic_id=ids[name], partitions=[
                               ShareAcknowledgeRequest.AcknowledgePartition(partition_index=0, acknowledgement_batches=[
                                   ShareAcknowledgeRequest.AcknowledgementBatch(first_offset=0, last_offset=0,
                                                                                acknowledge_types=[1])])])
                               for name in SHARE_TOPICS])
    answers["share_acknowledge"] = [acked.error_code, _partition_codes(acked.responses, ids)]
    offsets = client.request(DESCRIBE_SHARE_GROUP_OFFSETS, 0, groups=[
        DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=[
            DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestTopic(topic_name=name, partitions=[0])
            for name in SHARE_TOPICS]) for group in (SHARE_GROUP, "other-group")])
    answers["describe_share_group_offsets"] = {g.group_id: [g.error_code, {
        t.topic_name: t.partitions[0].error_code for t in g.topics}] for g in offsets.groups}
    moved = client.request(ALTER_SHARE_GROUP_OFFSETS, 0, group_id=SHARE_GROUP, topics=[
        AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestTopic(topic_name=name, partitions=[
            AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestPartition(partition_index=0, start_offset=0)])
        for name in SHARE_TOPICS])
    answers["alter_share_group_offsets"] = _refused({"group": moved.error_code})
    dropped = client.request(DELETE_SHARE_GROUP_OFFSETS, 0, group_id=SHARE_GROUP, topics=[
        DeleteShareGroupOffsetsRequest.DeleteShareGroupOffsetsRequestTopic(topic_name=name) for name in SHARE_TOPICS])
    answers["delete_share_group_offsets"] = dropped.error_code
    answers["share_state"] = _share_state(client, ids["orders"])
    coordinator = client.request(FIND_COORDINATOR, 6, key_type=2,
                                 coordinator_keys=[f"{SHARE_GROUP}:{_base64_id(ids['orders'])}:0"])
    answers["find_coordinator.share"] = coordinator.coordinators[0].error_code
    answers["refusal_messages"] = _refusal_messages(client)
    return answers


def _refusal_messages(client: RawClient) -> dict[str, list[Any]]:
    """Whole requests refused, with the error message (None when Kafka keeps its default one to itself; True for
    Kafka's "Request <its request object> is not authorized.", which no other broker can spell)."""
    answers = {}
    for name, response in {
        "share_group_heartbeat": client.request(
            SHARE_GROUP_HEARTBEAT, 1, group_id=SHARE_GROUP, member_id=MEMBER_ID, member_epoch=0, rack_id=None,
            subscribed_topic_names=["public-b"]),
        "consumer_group_heartbeat": client.request(
            CONSUMER_GROUP_HEARTBEAT, 0, group_id="team-a-next", member_id=MEMBER_ID, member_epoch=0,
            instance_id=None, rack_id=None, rebalance_timeout_ms=30_000, subscribed_topic_names=["public-b"],
            server_assignor=None, topic_partitions=[]),
        "delete_share_group_offsets": client.request(DELETE_SHARE_GROUP_OFFSETS, 0, group_id=SHARE_GROUP, topics=[]),
        "alter_share_group_offsets": client.request(ALTER_SHARE_GROUP_OFFSETS, 0, group_id="other-group", topics=[]),
        "describe_cluster": client.request(DESCRIBE_CLUSTER, 1, include_cluster_authorized_operations=False,
                                           endpoint_type=1),
        "list_partition_reassignments": client.request(LIST_PARTITION_REASSIGNMENTS, 0, timeout_ms=10_000,
                                                       topics=None),
        "alter_partition_reassignments": client.request(ALTER_PARTITION_REASSIGNMENTS, 0, timeout_ms=10_000,
                                                        topics=[]),
        "describe_acls": client.request(DESCRIBE_ACLS, 3, resource_type_filter=1, resource_name_filter=None,
                                        pattern_type_filter=1, principal_filter=None, host_filter=None, operation=1,
                                        permission_type=1),
        "share_fetch": client.request(SHARE_FETCH, 1, group_id="other-group", member_id=MEMBER_ID,
                                      share_session_epoch=0, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                                      max_records=10, batch_size=10, topics=[], forgotten_topics_data=[]),
        "share_acknowledge": client.request(SHARE_ACKNOWLEDGE, 1, group_id="other-group", member_id=MEMBER_ID,
                                            share_session_epoch=1, topics=[]),
    }.items():
        answers[name] = [response.error_code, _named_request(response.error_message)]
    created = client.request(CREATE_ACLS, 3, creations=[CreateAclsRequest.AclCreation(
        principal="User:nobody", resource_type=ResourceType.TOPIC, resource_name="anything", host="*",
        resource_pattern_type=PatternType.LITERAL, operation=AclOperation.READ, permission_type=AclPermissionType.ALLOW)])
    deleted = client.request(DELETE_ACLS, 3, filters=[DeleteAclsRequest.DeleteAclsFilter(
        resource_type_filter=ResourceType.TOPIC, resource_name_filter="anything", pattern_type_filter=PatternType.ANY,
        principal_filter=None, host_filter=None, operation=AclOperation.ANY, permission_type=AclPermissionType.ANY)])
    quorum = client.request(DESCRIBE_QUORUM, 2, topics=[DescribeQuorumRequest.TopicData(
        topic_name="__cluster_metadata", partitions=[DescribeQuorumRequest.PartitionData(partition_index=0)])])
    refused = quorum.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED  # allowed, the quorums differ
    answers["describe_quorum"] = [quorum.error_code, _named_request(quorum.error_message)] if refused else "allowed"
    answers["create_acls"] = [[r.error_code, _named_request(r.error_message)] for r in created.results]
    answers["delete_acls"] = [[r.error_code, _named_request(r.error_message)] for r in deleted.filter_results]
    described = client.request(SHARE_GROUP_DESCRIBE, 1, group_ids=["other-group"], include_authorized_operations=False)
    answers["share_group_describe"] = [[g.error_code, g.error_message] for g in described.groups]
    offsets = client.request(DESCRIBE_SHARE_GROUP_OFFSETS, 0, groups=[
        DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup(group_id="other-group", topics=[])])
    answers["describe_share_group_offsets"] = [[g.error_code, g.error_message] for g in offsets.groups]
    return answers


def _named_request(message: str | None) -> str | bool | None:
    """True for a message naming the refused request ("Request ... is not authorized.", "Request ... needs DESCRIBE
    permission."): Kafka prints its request object there, which no other broker can spell."""
    if message is not None and message.startswith("Request ") and message.endswith(
            (" is not authorized.", " permission.")):
        return True
    return message


def topic_ids(bootstrap: str) -> dict[str, bytes]:
    """The probed topics' ids, asked by the setup's super user (a principal's own Metadata hides some)."""
    with RawClient(bootstrap) as admin:
        listing = admin.request(METADATA, 12, allow_auto_topic_creation=False, topics=[
            MetadataRequest.MetadataRequestTopic(name=name) for name in SHARE_TOPICS])
    return {t.name: t.topic_id for t in listing.topics}


def _refused(codes: dict[str, int]) -> dict[str, int]:
    """Only the refusals: what a broker answers where it lets the request through depends on more than ACLs (Kafka
    leaves out a partition with nothing to deliver; it creates the share group AlterShareGroupOffsets names)."""
    return {name: code for name, code in codes.items() if code in AUTHORIZATION_FAILURES}


def _partition_codes(responses: list[Any], ids: dict[str, bytes]) -> dict[str, int]:
    names = {topic_id: name for name, topic_id in ids.items()}
    return {names.get(t.topic_id, "?"): t.partitions[0].error_code for t in responses}


def _share_state(client: RawClient, topic_id: bytes) -> dict[str, int]:
    """The persister's APIs (83-87), each for one partition: the partition's error code."""
    state = {
        "initialize": client.request(INITIALIZE_SHARE_GROUP_STATE, 0, group_id=SHARE_GROUP, topics=[
            InitializeShareGroupStateRequest.InitializeStateData(topic_id=topic_id, partitions=[
                InitializeShareGroupStateRequest.PartitionData(partition=0, state_epoch=0, start_offset=0)])]),
        "read": client.request(READ_SHARE_GROUP_STATE, 0, group_id=SHARE_GROUP, topics=[
            ReadShareGroupStateRequest.ReadStateData(topic_id=topic_id, partitions=[
                ReadShareGroupStateRequest.PartitionData(partition=0, leader_epoch=0)])]),
        "write": client.request(WRITE_SHARE_GROUP_STATE, 0, group_id=SHARE_GROUP, topics=[
            WriteShareGroupStateRequest.WriteStateData(topic_id=topic_id, partitions=[
                WriteShareGroupStateRequest.PartitionData(partition=0, state_epoch=0, leader_epoch=0, start_offset=0,
                                                          state_batches=[])])]),
        "delete": client.request(DELETE_SHARE_GROUP_STATE, 0, group_id=SHARE_GROUP, topics=[
            DeleteShareGroupStateRequest.DeleteStateData(topic_id=topic_id, partitions=[
                DeleteShareGroupStateRequest.PartitionData(partition=0)])]),
        "read_summary": client.request(READ_SHARE_GROUP_STATE_SUMMARY, 0, group_id=SHARE_GROUP, topics=[
            ReadShareGroupStateSummaryRequest.ReadStateSummaryData(topic_id=topic_id, partitions=[
                ReadShareGroupStateSummaryRequest.PartitionData(partition=0, leader_epoch=0)])]),
    }
    return {name: response.results[0].partitions[0].error_code for name, response in state.items()}


def _base64_id(topic_id: bytes) -> str:
    """A topic id as Kafka's Uuid.toString writes it (URL-safe base64, no padding)."""
    return base64.urlsafe_b64encode(topic_id).decode().rstrip("=")
