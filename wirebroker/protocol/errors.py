"""Kafka's error codes as an enum and as typed exceptions, one exception class per code.

The table is Apache Kafka 4.3.1's ``org.apache.kafka.common.protocol.Errors``: every code from -1 to the highest,
named exactly as Kafka names them. Each exception class carries its ``code`` and whether Kafka's exception for it
extends ``RetriableException`` (``retriable``); its docstring is Kafka's default message for the code, used when an
error is raised without a message of its own.

Class names are the CamelCase of Kafka's name plus ``Error`` (a trailing ``_ERROR`` or ``_EXCEPTION`` of Kafka's name
is not doubled: ``UNKNOWN_SERVER_ERROR`` -> ``UnknownServerError``, ``NETWORK_EXCEPTION`` -> ``NetworkError``).
Code raises these inside the broker; the API layer turns them into error codes with ``err.code``.
"""

from __future__ import annotations

import enum
from typing import ClassVar

class ErrorCode(enum.IntEnum):
    """Every error code Kafka sends on the wire."""

    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    OFFSET_OUT_OF_RANGE = 1
    CORRUPT_MESSAGE = 2
    UNKNOWN_TOPIC_OR_PARTITION = 3
    INVALID_FETCH_SIZE = 4
    LEADER_NOT_AVAILABLE = 5
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    BROKER_NOT_AVAILABLE = 8
    REPLICA_NOT_AVAILABLE = 9
    MESSAGE_TOO_LARGE = 10
    STALE_CONTROLLER_EPOCH = 11
    OFFSET_METADATA_TOO_LARGE = 12
    NETWORK_EXCEPTION = 13
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    INVALID_TOPIC_EXCEPTION = 17
    RECORD_LIST_TOO_LARGE = 18
    NOT_ENOUGH_REPLICAS = 19
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
    INVALID_REQUIRED_ACKS = 21
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    INVALID_COMMIT_OFFSET_SIZE = 28
    TOPIC_AUTHORIZATION_FAILED = 29
    GROUP_AUTHORIZATION_FAILED = 30
    CLUSTER_AUTHORIZATION_FAILED = 31
    INVALID_TIMESTAMP = 32
    UNSUPPORTED_SASL_MECHANISM = 33
    ILLEGAL_SASL_STATE = 34
    UNSUPPORTED_VERSION = 35
    TOPIC_ALREADY_EXISTS = 36
    INVALID_PARTITIONS = 37
    INVALID_REPLICATION_FACTOR = 38
    INVALID_REPLICA_ASSIGNMENT = 39
    INVALID_CONFIG = 40
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42
    UNSUPPORTED_FOR_MESSAGE_FORMAT = 43
    POLICY_VIOLATION = 44
    OUT_OF_ORDER_SEQUENCE_NUMBER = 45
    DUPLICATE_SEQUENCE_NUMBER = 46
    INVALID_PRODUCER_EPOCH = 47
    INVALID_TXN_STATE = 48
    INVALID_PRODUCER_ID_MAPPING = 49
    INVALID_TRANSACTION_TIMEOUT = 50
    CONCURRENT_TRANSACTIONS = 51
    TRANSACTION_COORDINATOR_FENCED = 52
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
    SECURITY_DISABLED = 54
    OPERATION_NOT_ATTEMPTED = 55
    KAFKA_STORAGE_ERROR = 56
    LOG_DIR_NOT_FOUND = 57
    SASL_AUTHENTICATION_FAILED = 58
    UNKNOWN_PRODUCER_ID = 59
    REASSIGNMENT_IN_PROGRESS = 60
    DELEGATION_TOKEN_AUTH_DISABLED = 61
    DELEGATION_TOKEN_NOT_FOUND = 62
    DELEGATION_TOKEN_OWNER_MISMATCH = 63
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED = 64
    DELEGATION_TOKEN_AUTHORIZATION_FAILED = 65
    DELEGATION_TOKEN_EXPIRED = 66
    INVALID_PRINCIPAL_TYPE = 67
    NON_EMPTY_GROUP = 68
    GROUP_ID_NOT_FOUND = 69
    FETCH_SESSION_ID_NOT_FOUND = 70
    INVALID_FETCH_SESSION_EPOCH = 71
    LISTENER_NOT_FOUND = 72
    TOPIC_DELETION_DISABLED = 73
    FENCED_LEADER_EPOCH = 74
    UNKNOWN_LEADER_EPOCH = 75
    UNSUPPORTED_COMPRESSION_TYPE = 76
    STALE_BROKER_EPOCH = 77
    OFFSET_NOT_AVAILABLE = 78
    MEMBER_ID_REQUIRED = 79
    PREFERRED_LEADER_NOT_AVAILABLE = 80
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
    ELECTION_NOT_NEEDED = 84
    NO_REASSIGNMENT_IN_PROGRESS = 85
    GROUP_SUBSCRIBED_TO_TOPIC = 86
    INVALID_RECORD = 87
    UNSTABLE_OFFSET_COMMIT = 88
    THROTTLING_QUOTA_EXCEEDED = 89
    PRODUCER_FENCED = 90
    RESOURCE_NOT_FOUND = 91
    DUPLICATE_RESOURCE = 92
    UNACCEPTABLE_CREDENTIAL = 93
    INCONSISTENT_VOTER_SET = 94
    INVALID_UPDATE_VERSION = 95
    FEATURE_UPDATE_FAILED = 96
    PRINCIPAL_DESERIALIZATION_FAILURE = 97
    SNAPSHOT_NOT_FOUND = 98
    POSITION_OUT_OF_RANGE = 99
    UNKNOWN_TOPIC_ID = 100
    DUPLICATE_BROKER_REGISTRATION = 101
    BROKER_ID_NOT_REGISTERED = 102
    INCONSISTENT_TOPIC_ID = 103
    INCONSISTENT_CLUSTER_ID = 104
    TRANSACTIONAL_ID_NOT_FOUND = 105
    FETCH_SESSION_TOPIC_ID_ERROR = 106
    INELIGIBLE_REPLICA = 107
    NEW_LEADER_ELECTED = 108
    OFFSET_MOVED_TO_TIERED_STORAGE = 109
    FENCED_MEMBER_EPOCH = 110
    UNRELEASED_INSTANCE_ID = 111
    UNSUPPORTED_ASSIGNOR = 112
    STALE_MEMBER_EPOCH = 113
    MISMATCHED_ENDPOINT_TYPE = 114
    UNSUPPORTED_ENDPOINT_TYPE = 115
    UNKNOWN_CONTROLLER_ID = 116
    UNKNOWN_SUBSCRIPTION_ID = 117
    TELEMETRY_TOO_LARGE = 118
    INVALID_REGISTRATION = 119
    TRANSACTION_ABORTABLE = 120
    INVALID_RECORD_STATE = 121
    SHARE_SESSION_NOT_FOUND = 122
    INVALID_SHARE_SESSION_EPOCH = 123
    FENCED_STATE_EPOCH = 124
    INVALID_VOTER_KEY = 125
    DUPLICATE_VOTER = 126
    VOTER_NOT_FOUND = 127
    INVALID_REGULAR_EXPRESSION = 128
    REBOOTSTRAP_REQUIRED = 129
    STREAMS_INVALID_TOPOLOGY = 130
    STREAMS_INVALID_TOPOLOGY_EPOCH = 131
    STREAMS_TOPOLOGY_FENCED = 132
    SHARE_SESSION_LIMIT_REACHED = 133


class KafkaError(Exception):
    """Base of the typed Kafka errors; ``str(err)`` is the message given, else Kafka's default message."""

    code: ClassVar[ErrorCode]
    retriable: ClassVar[bool] = False

    def __init__(self, message: str = "") -> None:
        super().__init__(message or " ".join((type(self).__doc__ or "").split()))


def error_class(code: int) -> type[KafkaError]:
    """The exception class for an error code (an unknown code gives UnknownServerError, as Kafka's forCode does)."""
    if code == ErrorCode.NONE:
        raise ValueError("error code 0 (NONE) is not an error")
    return _CLASS_BY_CODE.get(code, UnknownServerError)


def is_retriable(code: int) -> bool:
    """Whether Kafka's exception for this code is retriable (NONE and unknown codes are not)."""
    cls = _CLASS_BY_CODE.get(code)
    return cls is not None and cls.retriable


class UnknownServerError(KafkaError):
    """The server experienced an unexpected error when processing the request."""
    code = ErrorCode.UNKNOWN_SERVER_ERROR


class OffsetOutOfRangeError(KafkaError):
    """The requested offset is not within the range of offsets maintained by the server."""
    code = ErrorCode.OFFSET_OUT_OF_RANGE


class CorruptMessageError(KafkaError):
    """This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic,
    or is otherwise corrupt."""
    code = ErrorCode.CORRUPT_MESSAGE
    retriable = True


class UnknownTopicOrPartitionError(KafkaError):
    """This server does not host this topic-partition."""
    code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    retriable = True


class InvalidFetchSizeError(KafkaError):
    """The requested fetch size is invalid."""
    code = ErrorCode.INVALID_FETCH_SIZE


class LeaderNotAvailableError(KafkaError):
    """There is no leader for this topic-partition as we are in the middle of a leadership election."""
    code = ErrorCode.LEADER_NOT_AVAILABLE
    retriable = True


class NotLeaderOrFollowerError(KafkaError):
    """For requests intended only for the leader, this error indicates that the broker is not the current
    leader. For requests intended for any replica, this error indicates that the broker is not a replica of the
    topic partition."""
    code = ErrorCode.NOT_LEADER_OR_FOLLOWER
    retriable = True


class RequestTimedOutError(KafkaError):
    """The request timed out."""
    code = ErrorCode.REQUEST_TIMED_OUT
    retriable = True


class BrokerNotAvailableError(KafkaError):
    """The broker is not available."""
    code = ErrorCode.BROKER_NOT_AVAILABLE


class ReplicaNotAvailableError(KafkaError):
    """The replica is not available for the requested topic-partition. Produce/Fetch requests and other requests
    intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if the broker is not a replica of the
    topic-partition."""
    code = ErrorCode.REPLICA_NOT_AVAILABLE
    retriable = True


class MessageTooLargeError(KafkaError):
    """The request included a message larger than the max message size the server will accept."""
    code = ErrorCode.MESSAGE_TOO_LARGE


class StaleControllerEpochError(KafkaError):
    """The controller moved to another broker."""
    code = ErrorCode.STALE_CONTROLLER_EPOCH


class OffsetMetadataTooLargeError(KafkaError):
    """The metadata field of the offset request was too large."""
    code = ErrorCode.OFFSET_METADATA_TOO_LARGE


class NetworkError(KafkaError):
    """The server disconnected before a response was received."""
    code = ErrorCode.NETWORK_EXCEPTION
    retriable = True


class CoordinatorLoadInProgressError(KafkaError):
    """The coordinator is loading and hence can't process requests."""
    code = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    retriable = True


class CoordinatorNotAvailableError(KafkaError):
    """The coordinator is not available."""
    code = ErrorCode.COORDINATOR_NOT_AVAILABLE
    retriable = True


class NotCoordinatorError(KafkaError):
    """This is not the correct coordinator."""
    code = ErrorCode.NOT_COORDINATOR
    retriable = True


class InvalidTopicError(KafkaError):
    """The request attempted to perform an operation on an invalid topic."""
    code = ErrorCode.INVALID_TOPIC_EXCEPTION


class RecordListTooLargeError(KafkaError):
    """The request included message batch larger than the configured segment size on the server."""
    code = ErrorCode.RECORD_LIST_TOO_LARGE


class NotEnoughReplicasError(KafkaError):
    """Messages are rejected since there are fewer in-sync replicas than required."""
    code = ErrorCode.NOT_ENOUGH_REPLICAS
    retriable = True


class NotEnoughReplicasAfterAppendError(KafkaError):
    """Messages are written to the log, but to fewer in-sync replicas than required."""
    code = ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
    retriable = True


class InvalidRequiredAcksError(KafkaError):
    """Produce request specified an invalid value for required acks."""
    code = ErrorCode.INVALID_REQUIRED_ACKS


class IllegalGenerationError(KafkaError):
    """Specified group generation id is not valid."""
    code = ErrorCode.ILLEGAL_GENERATION


class InconsistentGroupProtocolError(KafkaError):
    """The group member's supported protocols are incompatible with those of existing members or first group
    member tried to join with empty protocol type or empty protocol list."""
    code = ErrorCode.INCONSISTENT_GROUP_PROTOCOL


class InvalidGroupIdError(KafkaError):
    """The group id is invalid."""
    code = ErrorCode.INVALID_GROUP_ID


class UnknownMemberIdError(KafkaError):
    """The coordinator is not aware of this member."""
    code = ErrorCode.UNKNOWN_MEMBER_ID


class InvalidSessionTimeoutError(KafkaError):
    """The session timeout is not within the range allowed by the broker (as configured by
    group.min.session.timeout.ms and group.max.session.timeout.ms)."""
    code = ErrorCode.INVALID_SESSION_TIMEOUT


class RebalanceInProgressError(KafkaError):
    """The group is rebalancing, so a rejoin is needed."""
    code = ErrorCode.REBALANCE_IN_PROGRESS


class InvalidCommitOffsetSizeError(KafkaError):
    """The committing offset data size is not valid."""
    code = ErrorCode.INVALID_COMMIT_OFFSET_SIZE


class TopicAuthorizationFailedError(KafkaError):
    """Topic authorization failed."""
    code = ErrorCode.TOPIC_AUTHORIZATION_FAILED


class GroupAuthorizationFailedError(KafkaError):
    """Group authorization failed."""
    code = ErrorCode.GROUP_AUTHORIZATION_FAILED


class ClusterAuthorizationFailedError(KafkaError):
    """Cluster authorization failed."""
    code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED


class InvalidTimestampError(KafkaError):
    """The timestamp of the message is out of acceptable range."""
    code = ErrorCode.INVALID_TIMESTAMP


class UnsupportedSaslMechanismError(KafkaError):
    """The broker does not support the requested SASL mechanism."""
    code = ErrorCode.UNSUPPORTED_SASL_MECHANISM


class IllegalSaslStateError(KafkaError):
    """Request is not valid given the current SASL state."""
    code = ErrorCode.ILLEGAL_SASL_STATE


class UnsupportedVersionError(KafkaError):
    """The version of API is not supported."""
    code = ErrorCode.UNSUPPORTED_VERSION


class TopicAlreadyExistsError(KafkaError):
    """Topic with this name already exists."""
    code = ErrorCode.TOPIC_ALREADY_EXISTS


class InvalidPartitionsError(KafkaError):
    """Number of partitions is below 1."""
    code = ErrorCode.INVALID_PARTITIONS


class InvalidReplicationFactorError(KafkaError):
    """Replication factor is below 1 or larger than the number of available brokers."""
    code = ErrorCode.INVALID_REPLICATION_FACTOR


class InvalidReplicaAssignmentError(KafkaError):
    """Replica assignment is invalid."""
    code = ErrorCode.INVALID_REPLICA_ASSIGNMENT


class InvalidConfigError(KafkaError):
    """Configuration is invalid."""
    code = ErrorCode.INVALID_CONFIG


class NotControllerError(KafkaError):
    """This is not the correct controller for this cluster."""
    code = ErrorCode.NOT_CONTROLLER
    retriable = True


class InvalidRequestError(KafkaError):
    """This most likely occurs because of a request being malformed by the client library or the message was
    sent to an incompatible broker. See the broker logs for more details."""
    code = ErrorCode.INVALID_REQUEST


class UnsupportedForMessageFormatError(KafkaError):
    """The message format version on the broker does not support the request."""
    code = ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT


class PolicyViolationError(KafkaError):
    """Request parameters do not satisfy the configured policy."""
    code = ErrorCode.POLICY_VIOLATION


class OutOfOrderSequenceNumberError(KafkaError):
    """The broker received an out of order sequence number."""
    code = ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


class DuplicateSequenceNumberError(KafkaError):
    """The broker received a duplicate sequence number."""
    code = ErrorCode.DUPLICATE_SEQUENCE_NUMBER


class InvalidProducerEpochError(KafkaError):
    """Producer attempted to produce with an old epoch."""
    code = ErrorCode.INVALID_PRODUCER_EPOCH


class InvalidTxnStateError(KafkaError):
    """The producer attempted a transactional operation in an invalid state."""
    code = ErrorCode.INVALID_TXN_STATE


class InvalidProducerIdMappingError(KafkaError):
    """The producer attempted to use a producer id which is not currently assigned to its transactional id."""
    code = ErrorCode.INVALID_PRODUCER_ID_MAPPING


class InvalidTransactionTimeoutError(KafkaError):
    """The transaction timeout is larger than the maximum value allowed by the broker (as configured by
    transaction.max.timeout.ms)."""
    code = ErrorCode.INVALID_TRANSACTION_TIMEOUT


class ConcurrentTransactionsError(KafkaError):
    """The producer attempted to update a transaction while another concurrent operation on the same transaction
    was ongoing."""
    code = ErrorCode.CONCURRENT_TRANSACTIONS
    retriable = True


class TransactionCoordinatorFencedError(KafkaError):
    """Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current coordinator
    for a given producer."""
    code = ErrorCode.TRANSACTION_COORDINATOR_FENCED


class TransactionalIdAuthorizationFailedError(KafkaError):
    """Transactional Id authorization failed."""
    code = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


class SecurityDisabledError(KafkaError):
    """Security features are disabled."""
    code = ErrorCode.SECURITY_DISABLED


class OperationNotAttemptedError(KafkaError):
    """The broker did not attempt to execute this operation. This may happen for batched RPCs where some
    operations in the batch failed, causing the broker to respond without trying the rest."""
    code = ErrorCode.OPERATION_NOT_ATTEMPTED


class KafkaStorageError(KafkaError):
    """Disk error when trying to access log file on the disk."""
    code = ErrorCode.KAFKA_STORAGE_ERROR
    retriable = True


class LogDirNotFoundError(KafkaError):
    """The user-specified log directory is not found in the broker config."""
    code = ErrorCode.LOG_DIR_NOT_FOUND


class SaslAuthenticationFailedError(KafkaError):
    """SASL Authentication failed."""
    code = ErrorCode.SASL_AUTHENTICATION_FAILED


class UnknownProducerIdError(KafkaError):
    """This exception is raised by the broker if it could not locate the producer metadata associated with the
    producerId in question. This could happen if, for instance, the producer's records were deleted because
    their retention time had elapsed. Once the last records of the producerId are removed, the producer's
    metadata is removed from the broker, and future appends by the producer will return this exception."""
    code = ErrorCode.UNKNOWN_PRODUCER_ID


class ReassignmentInProgressError(KafkaError):
    """A partition reassignment is in progress."""
    code = ErrorCode.REASSIGNMENT_IN_PROGRESS


class DelegationTokenAuthDisabledError(KafkaError):
    """Delegation Token feature is not enabled."""
    code = ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED


class DelegationTokenNotFoundError(KafkaError):
    """Delegation Token is not found on server."""
    code = ErrorCode.DELEGATION_TOKEN_NOT_FOUND


class DelegationTokenOwnerMismatchError(KafkaError):
    """Specified Principal is not valid Owner/Renewer."""
    code = ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH


class DelegationTokenRequestNotAllowedError(KafkaError):
    """Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token
    authenticated channels."""
    code = ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED


class DelegationTokenAuthorizationFailedError(KafkaError):
    """Delegation Token authorization failed."""
    code = ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED


class DelegationTokenExpiredError(KafkaError):
    """Delegation Token is expired."""
    code = ErrorCode.DELEGATION_TOKEN_EXPIRED


class InvalidPrincipalTypeError(KafkaError):
    """Supplied principalType is not supported."""
    code = ErrorCode.INVALID_PRINCIPAL_TYPE


class NonEmptyGroupError(KafkaError):
    """The group is not empty."""
    code = ErrorCode.NON_EMPTY_GROUP


class GroupIdNotFoundError(KafkaError):
    """The group id does not exist."""
    code = ErrorCode.GROUP_ID_NOT_FOUND


class FetchSessionIdNotFoundError(KafkaError):
    """The fetch session ID was not found."""
    code = ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    retriable = True


class InvalidFetchSessionEpochError(KafkaError):
    """The fetch session epoch is invalid."""
    code = ErrorCode.INVALID_FETCH_SESSION_EPOCH
    retriable = True


class ListenerNotFoundError(KafkaError):
    """There is no listener on the leader broker that matches the listener on which metadata request was
    processed."""
    code = ErrorCode.LISTENER_NOT_FOUND
    retriable = True


class TopicDeletionDisabledError(KafkaError):
    """Topic deletion is disabled."""
    code = ErrorCode.TOPIC_DELETION_DISABLED


class FencedLeaderEpochError(KafkaError):
    """The leader epoch in the request is older than the epoch on the broker."""
    code = ErrorCode.FENCED_LEADER_EPOCH
    retriable = True


class UnknownLeaderEpochError(KafkaError):
    """The leader epoch in the request is newer than the epoch on the broker."""
    code = ErrorCode.UNKNOWN_LEADER_EPOCH
    retriable = True


class UnsupportedCompressionTypeError(KafkaError):
    """The requesting client does not support the compression type of given partition."""
    code = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE


class StaleBrokerEpochError(KafkaError):
    """Broker epoch has changed."""
    code = ErrorCode.STALE_BROKER_EPOCH


class OffsetNotAvailableError(KafkaError):
    """The leader high watermark has not caught up from a recent leader election so the offsets cannot be
    guaranteed to be monotonically increasing."""
    code = ErrorCode.OFFSET_NOT_AVAILABLE
    retriable = True


class MemberIdRequiredError(KafkaError):
    """The group member needs to have a valid member id before actually entering a consumer group."""
    code = ErrorCode.MEMBER_ID_REQUIRED


class PreferredLeaderNotAvailableError(KafkaError):
    """The preferred leader was not available."""
    code = ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
    retriable = True


class GroupMaxSizeReachedError(KafkaError):
    """The group has reached its maximum size."""
    code = ErrorCode.GROUP_MAX_SIZE_REACHED


class FencedInstanceIdError(KafkaError):
    """The broker rejected this static consumer since another consumer with the same group.instance.id has
    registered with a different member.id."""
    code = ErrorCode.FENCED_INSTANCE_ID


class EligibleLeadersNotAvailableError(KafkaError):
    """Eligible topic partition leaders are not available."""
    code = ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
    retriable = True


class ElectionNotNeededError(KafkaError):
    """Leader election not needed for topic partition."""
    code = ErrorCode.ELECTION_NOT_NEEDED
    retriable = True


class NoReassignmentInProgressError(KafkaError):
    """No partition reassignment is in progress."""
    code = ErrorCode.NO_REASSIGNMENT_IN_PROGRESS


class GroupSubscribedToTopicError(KafkaError):
    """Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it."""
    code = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC


class InvalidRecordError(KafkaError):
    """This record has failed the validation on broker and hence will be rejected."""
    code = ErrorCode.INVALID_RECORD


class UnstableOffsetCommitError(KafkaError):
    """There are unstable offsets that need to be cleared."""
    code = ErrorCode.UNSTABLE_OFFSET_COMMIT
    retriable = True


class ThrottlingQuotaExceededError(KafkaError):
    """The throttling quota has been exceeded."""
    code = ErrorCode.THROTTLING_QUOTA_EXCEEDED
    retriable = True


class ProducerFencedError(KafkaError):
    """There is a newer producer with the same transactionalId which fences the current one."""
    code = ErrorCode.PRODUCER_FENCED


class ResourceNotFoundError(KafkaError):
    """A request illegally referred to a resource that does not exist."""
    code = ErrorCode.RESOURCE_NOT_FOUND


class DuplicateResourceError(KafkaError):
    """A request illegally referred to the same resource twice."""
    code = ErrorCode.DUPLICATE_RESOURCE


class UnacceptableCredentialError(KafkaError):
    """Requested credential would not meet criteria for acceptability."""
    code = ErrorCode.UNACCEPTABLE_CREDENTIAL


class InconsistentVoterSetError(KafkaError):
    """Indicates that the either the sender or recipient of a voter-only request is not one of the expected
    voters."""
    code = ErrorCode.INCONSISTENT_VOTER_SET


class InvalidUpdateVersionError(KafkaError):
    """The given update version was invalid."""
    code = ErrorCode.INVALID_UPDATE_VERSION


class FeatureUpdateFailedError(KafkaError):
    """Unable to update finalized features due to an unexpected server error."""
    code = ErrorCode.FEATURE_UPDATE_FAILED


class PrincipalDeserializationFailureError(KafkaError):
    """Request principal deserialization failed during forwarding. This indicates an internal error on the
    broker cluster security setup."""
    code = ErrorCode.PRINCIPAL_DESERIALIZATION_FAILURE


class SnapshotNotFoundError(KafkaError):
    """Requested snapshot was not found."""
    code = ErrorCode.SNAPSHOT_NOT_FOUND


class PositionOutOfRangeError(KafkaError):
    """Requested position is not greater than or equal to zero, and less than the size of the snapshot."""
    code = ErrorCode.POSITION_OUT_OF_RANGE


class UnknownTopicIdError(KafkaError):
    """This server does not host this topic ID."""
    code = ErrorCode.UNKNOWN_TOPIC_ID
    retriable = True


class DuplicateBrokerRegistrationError(KafkaError):
    """This broker ID is already in use."""
    code = ErrorCode.DUPLICATE_BROKER_REGISTRATION


class BrokerIdNotRegisteredError(KafkaError):
    """The given broker ID was not registered."""
    code = ErrorCode.BROKER_ID_NOT_REGISTERED


class InconsistentTopicIdError(KafkaError):
    """The log's topic ID did not match the topic ID in the request."""
    code = ErrorCode.INCONSISTENT_TOPIC_ID
    retriable = True


class InconsistentClusterIdError(KafkaError):
    """The clusterId in the request does not match that found on the server."""
    code = ErrorCode.INCONSISTENT_CLUSTER_ID


class TransactionalIdNotFoundError(KafkaError):
    """The transactionalId could not be found."""
    code = ErrorCode.TRANSACTIONAL_ID_NOT_FOUND


class FetchSessionTopicIdError(KafkaError):
    """The fetch session encountered inconsistent topic ID usage."""
    code = ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR
    retriable = True


class IneligibleReplicaError(KafkaError):
    """The new ISR contains at least one ineligible replica."""
    code = ErrorCode.INELIGIBLE_REPLICA


class NewLeaderElectedError(KafkaError):
    """The AlterPartition request successfully updated the partition state but the leader has changed."""
    code = ErrorCode.NEW_LEADER_ELECTED


class OffsetMovedToTieredStorageError(KafkaError):
    """The requested offset is moved to tiered storage."""
    code = ErrorCode.OFFSET_MOVED_TO_TIERED_STORAGE


class FencedMemberEpochError(KafkaError):
    """The member epoch is fenced by the group coordinator. The member must abandon all its partitions and
    rejoin."""
    code = ErrorCode.FENCED_MEMBER_EPOCH


class UnreleasedInstanceIdError(KafkaError):
    """The instance ID is still used by another member in the consumer group. That member must leave first."""
    code = ErrorCode.UNRELEASED_INSTANCE_ID


class UnsupportedAssignorError(KafkaError):
    """The assignor or its version range is not supported by the consumer group."""
    code = ErrorCode.UNSUPPORTED_ASSIGNOR


class StaleMemberEpochError(KafkaError):
    """The member epoch is stale. The member must retry after receiving its updated member epoch via the
    ConsumerGroupHeartbeat API."""
    code = ErrorCode.STALE_MEMBER_EPOCH


class MismatchedEndpointTypeError(KafkaError):
    """The request was sent to an endpoint of the wrong type."""
    code = ErrorCode.MISMATCHED_ENDPOINT_TYPE


class UnsupportedEndpointTypeError(KafkaError):
    """This endpoint type is not supported yet."""
    code = ErrorCode.UNSUPPORTED_ENDPOINT_TYPE


class UnknownControllerIdError(KafkaError):
    """This controller ID is not known."""
    code = ErrorCode.UNKNOWN_CONTROLLER_ID


class UnknownSubscriptionIdError(KafkaError):
    """Client sent a push telemetry request with an invalid or outdated subscription ID."""
    code = ErrorCode.UNKNOWN_SUBSCRIPTION_ID


class TelemetryTooLargeError(KafkaError):
    """Client sent a push telemetry request larger than the maximum size the broker will accept."""
    code = ErrorCode.TELEMETRY_TOO_LARGE


class InvalidRegistrationError(KafkaError):
    """The controller has considered the broker registration to be invalid."""
    code = ErrorCode.INVALID_REGISTRATION


class TransactionAbortableError(KafkaError):
    """The server encountered an error with the transaction. The client can abort the transaction to continue
    using this transactional ID."""
    code = ErrorCode.TRANSACTION_ABORTABLE


class InvalidRecordStateError(KafkaError):
    """The record state is invalid. The acknowledgement of delivery could not be completed."""
    code = ErrorCode.INVALID_RECORD_STATE


class ShareSessionNotFoundError(KafkaError):
    """The share session was not found."""
    code = ErrorCode.SHARE_SESSION_NOT_FOUND
    retriable = True


class InvalidShareSessionEpochError(KafkaError):
    """The share session epoch is invalid."""
    code = ErrorCode.INVALID_SHARE_SESSION_EPOCH
    retriable = True


class FencedStateEpochError(KafkaError):
    """The share coordinator rejected the request because the share-group state epoch did not match."""
    code = ErrorCode.FENCED_STATE_EPOCH


class InvalidVoterKeyError(KafkaError):
    """The voter key doesn't match the receiving replica's key."""
    code = ErrorCode.INVALID_VOTER_KEY


class DuplicateVoterError(KafkaError):
    """The voter is already part of the set of voters."""
    code = ErrorCode.DUPLICATE_VOTER


class VoterNotFoundError(KafkaError):
    """The voter is not part of the set of voters."""
    code = ErrorCode.VOTER_NOT_FOUND


class InvalidRegularExpressionError(KafkaError):
    """The regular expression is not valid."""
    code = ErrorCode.INVALID_REGULAR_EXPRESSION


class RebootstrapRequiredError(KafkaError):
    """Client metadata is stale. The client should rebootstrap to obtain new metadata."""
    code = ErrorCode.REBOOTSTRAP_REQUIRED


class StreamsInvalidTopologyError(KafkaError):
    """The supplied topology is invalid."""
    code = ErrorCode.STREAMS_INVALID_TOPOLOGY


class StreamsInvalidTopologyEpochError(KafkaError):
    """The supplied topology epoch is invalid."""
    code = ErrorCode.STREAMS_INVALID_TOPOLOGY_EPOCH


class StreamsTopologyFencedError(KafkaError):
    """The supplied topology epoch is outdated."""
    code = ErrorCode.STREAMS_TOPOLOGY_FENCED


class ShareSessionLimitReachedError(KafkaError):
    """The limit of share sessions has been reached."""
    code = ErrorCode.SHARE_SESSION_LIMIT_REACHED
    retriable = True


_CLASS_BY_CODE: dict[int, type[KafkaError]] = {cls.code: cls for cls in KafkaError.__subclasses__()}
