"""One typed exception per Kafka error code (error_codes.py): raised inside the broker, sent as ``err.code``.

Class keywords give each its ``code`` and whether Kafka's exception is retriable; the docstring is Kafka's default
message. Names: Kafka's in CamelCase plus ``Error``, not doubled (``NETWORK_EXCEPTION`` -> ``NetworkError``).
"""

from typing import ClassVar

from wirebroker.protocol.error_codes import ErrorCode


class KafkaError(Exception):
    """Base of the typed Kafka errors; ``str(err)`` is the message given, else Kafka's default message."""

    code: ClassVar[ErrorCode]
    retriable: ClassVar[bool]

    def __init_subclass__(cls, *, code: ErrorCode, retriable: bool = False, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.code = code
        cls.retriable = retriable

    def __init__(self, message: str = "") -> None:
        super().__init__(message or " ".join((type(self).__doc__ or "").split()))


def error_class(code: int) -> type[KafkaError]:
    """The exception class for an error code (an unknown code gives UnknownServerError, as Kafka's forCode does)."""
    if code == ErrorCode.NONE:
        raise ValueError("error code 0 (NONE) is not an error")
    return _CLASS_BY_CODE.get(code, UnknownServerError)


def is_retriable(code: int) -> bool:
    """Whether Kafka's exception for this code is retriable (NONE and unknown codes are not)."""
    return code in _CLASS_BY_CODE and _CLASS_BY_CODE[code].retriable


class UnknownServerError(KafkaError, code=ErrorCode.UNKNOWN_SERVER_ERROR):
    """The server experienced an unexpected error when processing the request."""


class OffsetOutOfRangeError(KafkaError, code=ErrorCode.OFFSET_OUT_OF_RANGE):
    """The requested offset is not within the range of offsets maintained by the server."""


class CorruptMessageError(KafkaError, code=ErrorCode.CORRUPT_MESSAGE, retriable=True):
    """This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, or is
    otherwise corrupt."""


class UnknownTopicOrPartitionError(KafkaError, code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, retriable=True):
    """This server does not host this topic-partition."""


class InvalidFetchSizeError(KafkaError, code=ErrorCode.INVALID_FETCH_SIZE):
    """The requested fetch size is invalid."""


class LeaderNotAvailableError(KafkaError, code=ErrorCode.LEADER_NOT_AVAILABLE, retriable=True):
    """There is no leader for this topic-partition as we are in the middle of a leadership election."""


class NotLeaderOrFollowerError(KafkaError, code=ErrorCode.NOT_LEADER_OR_FOLLOWER, retriable=True):
    """For requests intended only for the leader, this error indicates that the broker is not the current leader.
    For requests intended for any replica, this error indicates that the broker is not a replica of the topic
    partition."""


class RequestTimedOutError(KafkaError, code=ErrorCode.REQUEST_TIMED_OUT, retriable=True):
    """The request timed out."""


class BrokerNotAvailableError(KafkaError, code=ErrorCode.BROKER_NOT_AVAILABLE):
    """The broker is not available."""


class ReplicaNotAvailableError(KafkaError, code=ErrorCode.REPLICA_NOT_AVAILABLE, retriable=True):
    """The replica is not available for the requested topic-partition. Produce/Fetch requests and other requests
    intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if the broker is not a replica of the
    topic-partition."""


class MessageTooLargeError(KafkaError, code=ErrorCode.MESSAGE_TOO_LARGE):
    """The request included a message larger than the max message size the server will accept."""


class StaleControllerEpochError(KafkaError, code=ErrorCode.STALE_CONTROLLER_EPOCH):
    """The controller moved to another broker."""


class OffsetMetadataTooLargeError(KafkaError, code=ErrorCode.OFFSET_METADATA_TOO_LARGE):
    """The metadata field of the offset request was too large."""


class NetworkError(KafkaError, code=ErrorCode.NETWORK_EXCEPTION, retriable=True):
    """The server disconnected before a response was received."""


class CoordinatorLoadInProgressError(KafkaError, code=ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, retriable=True):
    """The coordinator is loading and hence can't process requests."""


class CoordinatorNotAvailableError(KafkaError, code=ErrorCode.COORDINATOR_NOT_AVAILABLE, retriable=True):
    """The coordinator is not available."""


class NotCoordinatorError(KafkaError, code=ErrorCode.NOT_COORDINATOR, retriable=True):
    """This is not the correct coordinator."""


class InvalidTopicError(KafkaError, code=ErrorCode.INVALID_TOPIC_EXCEPTION):
    """The request attempted to perform an operation on an invalid topic."""


class RecordListTooLargeError(KafkaError, code=ErrorCode.RECORD_LIST_TOO_LARGE):
    """The request included message batch larger than the configured segment size on the server."""


class NotEnoughReplicasError(KafkaError, code=ErrorCode.NOT_ENOUGH_REPLICAS, retriable=True):
    """Messages are rejected since there are fewer in-sync replicas than required."""


class NotEnoughReplicasAfterAppendError(KafkaError, code=ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, retriable=True):
    """Messages are written to the log, but to fewer in-sync replicas than required."""


class InvalidRequiredAcksError(KafkaError, code=ErrorCode.INVALID_REQUIRED_ACKS):
    """Produce request specified an invalid value for required acks."""


class IllegalGenerationError(KafkaError, code=ErrorCode.ILLEGAL_GENERATION):
    """Specified group generation id is not valid."""


class InconsistentGroupProtocolError(KafkaError, code=ErrorCode.INCONSISTENT_GROUP_PROTOCOL):
    """The group member's supported protocols are incompatible with those of existing members or first group member
    tried to join with empty protocol type or empty protocol list."""


class InvalidGroupIdError(KafkaError, code=ErrorCode.INVALID_GROUP_ID):
    """The group id is invalid."""


class UnknownMemberIdError(KafkaError, code=ErrorCode.UNKNOWN_MEMBER_ID):
    """The coordinator is not aware of this member."""


class InvalidSessionTimeoutError(KafkaError, code=ErrorCode.INVALID_SESSION_TIMEOUT):
    """The session timeout is not within the range allowed by the broker (as configured by
    group.min.session.timeout.ms and group.max.session.timeout.ms)."""


class RebalanceInProgressError(KafkaError, code=ErrorCode.REBALANCE_IN_PROGRESS):
    """The group is rebalancing, so a rejoin is needed."""


class InvalidCommitOffsetSizeError(KafkaError, code=ErrorCode.INVALID_COMMIT_OFFSET_SIZE):
    """The committing offset data size is not valid."""


class TopicAuthorizationFailedError(KafkaError, code=ErrorCode.TOPIC_AUTHORIZATION_FAILED):
    """Topic authorization failed."""


class GroupAuthorizationFailedError(KafkaError, code=ErrorCode.GROUP_AUTHORIZATION_FAILED):
    """Group authorization failed."""


class ClusterAuthorizationFailedError(KafkaError, code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED):
    """Cluster authorization failed."""


class InvalidTimestampError(KafkaError, code=ErrorCode.INVALID_TIMESTAMP):
    """The timestamp of the message is out of acceptable range."""


class UnsupportedSaslMechanismError(KafkaError, code=ErrorCode.UNSUPPORTED_SASL_MECHANISM):
    """The broker does not support the requested SASL mechanism."""


class IllegalSaslStateError(KafkaError, code=ErrorCode.ILLEGAL_SASL_STATE):
    """Request is not valid given the current SASL state."""


class UnsupportedVersionError(KafkaError, code=ErrorCode.UNSUPPORTED_VERSION):
    """The version of API is not supported."""


class TopicAlreadyExistsError(KafkaError, code=ErrorCode.TOPIC_ALREADY_EXISTS):
    """Topic with this name already exists."""


class InvalidPartitionsError(KafkaError, code=ErrorCode.INVALID_PARTITIONS):
    """Number of partitions is below 1."""


class InvalidReplicationFactorError(KafkaError, code=ErrorCode.INVALID_REPLICATION_FACTOR):
    """Replication factor is below 1 or larger than the number of available brokers."""


class InvalidReplicaAssignmentError(KafkaError, code=ErrorCode.INVALID_REPLICA_ASSIGNMENT):
    """Replica assignment is invalid."""


class InvalidConfigError(KafkaError, code=ErrorCode.INVALID_CONFIG):
    """Configuration is invalid."""


class NotControllerError(KafkaError, code=ErrorCode.NOT_CONTROLLER, retriable=True):
    """This is not the correct controller for this cluster."""


class InvalidRequestError(KafkaError, code=ErrorCode.INVALID_REQUEST):
    """This most likely occurs because of a request being malformed by the client library or the message was sent to
    an incompatible broker. See the broker logs for more details."""


class UnsupportedForMessageFormatError(KafkaError, code=ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT):
    """The message format version on the broker does not support the request."""


class PolicyViolationError(KafkaError, code=ErrorCode.POLICY_VIOLATION):
    """Request parameters do not satisfy the configured policy."""


class OutOfOrderSequenceNumberError(KafkaError, code=ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER):
    """The broker received an out of order sequence number."""


class DuplicateSequenceNumberError(KafkaError, code=ErrorCode.DUPLICATE_SEQUENCE_NUMBER):
    """The broker received a duplicate sequence number."""


class InvalidProducerEpochError(KafkaError, code=ErrorCode.INVALID_PRODUCER_EPOCH):
    """Producer attempted to produce with an old epoch."""


class InvalidTxnStateError(KafkaError, code=ErrorCode.INVALID_TXN_STATE):
    """The producer attempted a transactional operation in an invalid state."""


class InvalidProducerIdMappingError(KafkaError, code=ErrorCode.INVALID_PRODUCER_ID_MAPPING):
    """The producer attempted to use a producer id which is not currently assigned to its transactional id."""


class InvalidTransactionTimeoutError(KafkaError, code=ErrorCode.INVALID_TRANSACTION_TIMEOUT):
    """The transaction timeout is larger than the maximum value allowed by the broker (as configured by
    transaction.max.timeout.ms)."""


class ConcurrentTransactionsError(KafkaError, code=ErrorCode.CONCURRENT_TRANSACTIONS, retriable=True):
    """The producer attempted to update a transaction while another concurrent operation on the same transaction was
    ongoing."""


class TransactionCoordinatorFencedError(KafkaError, code=ErrorCode.TRANSACTION_COORDINATOR_FENCED):
    """Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current coordinator for
    a given producer."""


class TransactionalIdAuthorizationFailedError(KafkaError, code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED):
    """Transactional Id authorization failed."""


class SecurityDisabledError(KafkaError, code=ErrorCode.SECURITY_DISABLED):
    """Security features are disabled."""


class OperationNotAttemptedError(KafkaError, code=ErrorCode.OPERATION_NOT_ATTEMPTED):
    """The broker did not attempt to execute this operation. This may happen for batched RPCs where some operations
    in the batch failed, causing the broker to respond without trying the rest."""


class KafkaStorageError(KafkaError, code=ErrorCode.KAFKA_STORAGE_ERROR, retriable=True):
    """Disk error when trying to access log file on the disk."""


class LogDirNotFoundError(KafkaError, code=ErrorCode.LOG_DIR_NOT_FOUND):
    """The user-specified log directory is not found in the broker config."""


class SaslAuthenticationFailedError(KafkaError, code=ErrorCode.SASL_AUTHENTICATION_FAILED):
    """SASL Authentication failed."""


class UnknownProducerIdError(KafkaError, code=ErrorCode.UNKNOWN_PRODUCER_ID):
    """This exception is raised by the broker if it could not locate the producer metadata associated with the
    producerId in question. This could happen if, for instance, the producer's records were deleted because their
    retention time had elapsed. Once the last records of the producerId are removed, the producer's metadata is
    removed from the broker, and future appends by the producer will return this exception."""


class ReassignmentInProgressError(KafkaError, code=ErrorCode.REASSIGNMENT_IN_PROGRESS):
    """A partition reassignment is in progress."""


class DelegationTokenAuthDisabledError(KafkaError, code=ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED):
    """Delegation Token feature is not enabled."""


class DelegationTokenNotFoundError(KafkaError, code=ErrorCode.DELEGATION_TOKEN_NOT_FOUND):
    """Delegation Token is not found on server."""


class DelegationTokenOwnerMismatchError(KafkaError, code=ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH):
    """Specified Principal is not valid Owner/Renewer."""


class DelegationTokenRequestNotAllowedError(KafkaError, code=ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED):
    """Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token
    authenticated channels."""


class DelegationTokenAuthorizationFailedError(KafkaError, code=ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED):
    """Delegation Token authorization failed."""


class DelegationTokenExpiredError(KafkaError, code=ErrorCode.DELEGATION_TOKEN_EXPIRED):
    """Delegation Token is expired."""


class InvalidPrincipalTypeError(KafkaError, code=ErrorCode.INVALID_PRINCIPAL_TYPE):
    """Supplied principalType is not supported."""


class NonEmptyGroupError(KafkaError, code=ErrorCode.NON_EMPTY_GROUP):
    """The group is not empty."""


class GroupIdNotFoundError(KafkaError, code=ErrorCode.GROUP_ID_NOT_FOUND):
    """The group id does not exist."""


class FetchSessionIdNotFoundError(KafkaError, code=ErrorCode.FETCH_SESSION_ID_NOT_FOUND, retriable=True):
    """The fetch session ID was not found."""


class InvalidFetchSessionEpochError(KafkaError, code=ErrorCode.INVALID_FETCH_SESSION_EPOCH, retriable=True):
    """The fetch session epoch is invalid."""


class ListenerNotFoundError(KafkaError, code=ErrorCode.LISTENER_NOT_FOUND, retriable=True):
    """There is no listener on the leader broker that matches the listener on which metadata request was
    processed."""


class TopicDeletionDisabledError(KafkaError, code=ErrorCode.TOPIC_DELETION_DISABLED):
    """Topic deletion is disabled."""


class FencedLeaderEpochError(KafkaError, code=ErrorCode.FENCED_LEADER_EPOCH, retriable=True):
    """The leader epoch in the request is older than the epoch on the broker."""


class UnknownLeaderEpochError(KafkaError, code=ErrorCode.UNKNOWN_LEADER_EPOCH, retriable=True):
    """The leader epoch in the request is newer than the epoch on the broker."""


class UnsupportedCompressionTypeError(KafkaError, code=ErrorCode.UNSUPPORTED_COMPRESSION_TYPE):
    """The requesting client does not support the compression type of given partition."""


class StaleBrokerEpochError(KafkaError, code=ErrorCode.STALE_BROKER_EPOCH):
    """Broker epoch has changed."""


class OffsetNotAvailableError(KafkaError, code=ErrorCode.OFFSET_NOT_AVAILABLE, retriable=True):
    """The leader high watermark has not caught up from a recent leader election so the offsets cannot be guaranteed
    to be monotonically increasing."""


class MemberIdRequiredError(KafkaError, code=ErrorCode.MEMBER_ID_REQUIRED):
    """The group member needs to have a valid member id before actually entering a consumer group."""


class PreferredLeaderNotAvailableError(KafkaError, code=ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, retriable=True):
    """The preferred leader was not available."""


class GroupMaxSizeReachedError(KafkaError, code=ErrorCode.GROUP_MAX_SIZE_REACHED):
    """The group has reached its maximum size."""


class FencedInstanceIdError(KafkaError, code=ErrorCode.FENCED_INSTANCE_ID):
    """The broker rejected this static consumer since another consumer with the same group.instance.id has
    registered with a different member.id."""


class EligibleLeadersNotAvailableError(KafkaError, code=ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, retriable=True):
    """Eligible topic partition leaders are not available."""


class ElectionNotNeededError(KafkaError, code=ErrorCode.ELECTION_NOT_NEEDED, retriable=True):
    """Leader election not needed for topic partition."""


class NoReassignmentInProgressError(KafkaError, code=ErrorCode.NO_REASSIGNMENT_IN_PROGRESS):
    """No partition reassignment is in progress."""


class GroupSubscribedToTopicError(KafkaError, code=ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC):
    """Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it."""


class InvalidRecordError(KafkaError, code=ErrorCode.INVALID_RECORD):
    """This record has failed the validation on broker and hence will be rejected."""


class UnstableOffsetCommitError(KafkaError, code=ErrorCode.UNSTABLE_OFFSET_COMMIT, retriable=True):
    """There are unstable offsets that need to be cleared."""


class ThrottlingQuotaExceededError(KafkaError, code=ErrorCode.THROTTLING_QUOTA_EXCEEDED, retriable=True):
    """The throttling quota has been exceeded."""


class ProducerFencedError(KafkaError, code=ErrorCode.PRODUCER_FENCED):
    """There is a newer producer with the same transactionalId which fences the current one."""


class ResourceNotFoundError(KafkaError, code=ErrorCode.RESOURCE_NOT_FOUND):
    """A request illegally referred to a resource that does not exist."""


class DuplicateResourceError(KafkaError, code=ErrorCode.DUPLICATE_RESOURCE):
    """A request illegally referred to the same resource twice."""


class UnacceptableCredentialError(KafkaError, code=ErrorCode.UNACCEPTABLE_CREDENTIAL):
    """Requested credential would not meet criteria for acceptability."""


class InconsistentVoterSetError(KafkaError, code=ErrorCode.INCONSISTENT_VOTER_SET):
    """Indicates that the either the sender or recipient of a voter-only request is not one of the expected
    voters."""


class InvalidUpdateVersionError(KafkaError, code=ErrorCode.INVALID_UPDATE_VERSION):
    """The given update version was invalid."""


class FeatureUpdateFailedError(KafkaError, code=ErrorCode.FEATURE_UPDATE_FAILED):
    """Unable to update finalized features due to an unexpected server error."""


class PrincipalDeserializationFailureError(KafkaError, code=ErrorCode.PRINCIPAL_DESERIALIZATION_FAILURE):
    """Request principal deserialization failed during forwarding. This indicates an internal error on the broker
    cluster security setup."""


class SnapshotNotFoundError(KafkaError, code=ErrorCode.SNAPSHOT_NOT_FOUND):
    """Requested snapshot was not found."""


class PositionOutOfRangeError(KafkaError, code=ErrorCode.POSITION_OUT_OF_RANGE):
    """Requested position is not greater than or equal to zero, and less than the size of the snapshot."""


class UnknownTopicIdError(KafkaError, code=ErrorCode.UNKNOWN_TOPIC_ID, retriable=True):
    """This server does not host this topic ID."""


class DuplicateBrokerRegistrationError(KafkaError, code=ErrorCode.DUPLICATE_BROKER_REGISTRATION):
    """This broker ID is already in use."""


class BrokerIdNotRegisteredError(KafkaError, code=ErrorCode.BROKER_ID_NOT_REGISTERED):
    """The given broker ID was not registered."""


class InconsistentTopicIdError(KafkaError, code=ErrorCode.INCONSISTENT_TOPIC_ID, retriable=True):
    """The log's topic ID did not match the topic ID in the request."""


class InconsistentClusterIdError(KafkaError, code=ErrorCode.INCONSISTENT_CLUSTER_ID):
    """The clusterId in the request does not match that found on the server."""


class TransactionalIdNotFoundError(KafkaError, code=ErrorCode.TRANSACTIONAL_ID_NOT_FOUND):
    """The transactionalId could not be found."""


class FetchSessionTopicIdError(KafkaError, code=ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR, retriable=True):
    """The fetch session encountered inconsistent topic ID usage."""


class IneligibleReplicaError(KafkaError, code=ErrorCode.INELIGIBLE_REPLICA):
    """The new ISR contains at least one ineligible replica."""


class NewLeaderElectedError(KafkaError, code=ErrorCode.NEW_LEADER_ELECTED):
    """The AlterPartition request successfully updated the partition state but the leader has changed."""


class OffsetMovedToTieredStorageError(KafkaError, code=ErrorCode.OFFSET_MOVED_TO_TIERED_STORAGE):
    """The requested offset is moved to tiered storage."""


class FencedMemberEpochError(KafkaError, code=ErrorCode.FENCED_MEMBER_EPOCH):
    """The member epoch is fenced by the group coordinator. The member must abandon all its partitions and
    rejoin."""


class UnreleasedInstanceIdError(KafkaError, code=ErrorCode.UNRELEASED_INSTANCE_ID):
    """The instance ID is still used by another member in the consumer group. That member must leave first."""


class UnsupportedAssignorError(KafkaError, code=ErrorCode.UNSUPPORTED_ASSIGNOR):
    """The assignor or its version range is not supported by the consumer group."""


class StaleMemberEpochError(KafkaError, code=ErrorCode.STALE_MEMBER_EPOCH):
    """The member epoch is stale. The member must retry after receiving its updated member epoch via the
    ConsumerGroupHeartbeat API."""


class MismatchedEndpointTypeError(KafkaError, code=ErrorCode.MISMATCHED_ENDPOINT_TYPE):
    """The request was sent to an endpoint of the wrong type."""


class UnsupportedEndpointTypeError(KafkaError, code=ErrorCode.UNSUPPORTED_ENDPOINT_TYPE):
    """This endpoint type is not supported yet."""


class UnknownControllerIdError(KafkaError, code=ErrorCode.UNKNOWN_CONTROLLER_ID):
    """This controller ID is not known."""


class UnknownSubscriptionIdError(KafkaError, code=ErrorCode.UNKNOWN_SUBSCRIPTION_ID):
    """Client sent a push telemetry request with an invalid or outdated subscription ID."""


class TelemetryTooLargeError(KafkaError, code=ErrorCode.TELEMETRY_TOO_LARGE):
    """Client sent a push telemetry request larger than the maximum size the broker will accept."""


class InvalidRegistrationError(KafkaError, code=ErrorCode.INVALID_REGISTRATION):
    """The controller has considered the broker registration to be invalid."""


class TransactionAbortableError(KafkaError, code=ErrorCode.TRANSACTION_ABORTABLE):
    """The server encountered an error with the transaction. The client can abort the transaction to continue using
    this transactional ID."""


class InvalidRecordStateError(KafkaError, code=ErrorCode.INVALID_RECORD_STATE):
    """The record state is invalid. The acknowledgement of delivery could not be completed."""


class ShareSessionNotFoundError(KafkaError, code=ErrorCode.SHARE_SESSION_NOT_FOUND, retriable=True):
    """The share session was not found."""


class InvalidShareSessionEpochError(KafkaError, code=ErrorCode.INVALID_SHARE_SESSION_EPOCH, retriable=True):
    """The share session epoch is invalid."""


class FencedStateEpochError(KafkaError, code=ErrorCode.FENCED_STATE_EPOCH):
    """The share coordinator rejected the request because the share-group state epoch did not match."""


class InvalidVoterKeyError(KafkaError, code=ErrorCode.INVALID_VOTER_KEY):
    """The voter key doesn't match the receiving replica's key."""


class DuplicateVoterError(KafkaError, code=ErrorCode.DUPLICATE_VOTER):
    """The voter is already part of the set of voters."""


class VoterNotFoundError(KafkaError, code=ErrorCode.VOTER_NOT_FOUND):
    """The voter is not part of the set of voters."""


class InvalidRegularExpressionError(KafkaError, code=ErrorCode.INVALID_REGULAR_EXPRESSION):
    """The regular expression is not valid."""


class RebootstrapRequiredError(KafkaError, code=ErrorCode.REBOOTSTRAP_REQUIRED):
    """Client metadata is stale. The client should rebootstrap to obtain new metadata."""


class StreamsInvalidTopologyError(KafkaError, code=ErrorCode.STREAMS_INVALID_TOPOLOGY):
    """The supplied topology is invalid."""


class StreamsInvalidTopologyEpochError(KafkaError, code=ErrorCode.STREAMS_INVALID_TOPOLOGY_EPOCH):
    """The supplied topology epoch is invalid."""


class StreamsTopologyFencedError(KafkaError, code=ErrorCode.STREAMS_TOPOLOGY_FENCED):
    """The supplied topology epoch is outdated."""


class ShareSessionLimitReachedError(KafkaError, code=ErrorCode.SHARE_SESSION_LIMIT_REACHED, retriable=True):
    """The limit of share sessions has been reached."""


_CLASS_BY_CODE: dict[int, type[KafkaError]] = {cls.code: cls for cls in KafkaError.__subclasses__()}
