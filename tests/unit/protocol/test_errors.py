import pytest

from wirebroker.protocol import errors
from wirebroker.protocol.errors import ErrorCode, KafkaError, error_class, is_retriable


def test_codes_are_unique_and_contiguous_from_minus_one():
    codes = [member.value for member in ErrorCode]
    assert len(codes) == len(set(codes))
    assert sorted(codes) == list(range(-1, max(codes) + 1))


def test_every_code_but_none_has_exactly_one_class():
    classes = [cls for cls in vars(errors).values() if isinstance(cls, type) and issubclass(cls, KafkaError)]
    codes = [cls.code for cls in classes if cls is not KafkaError]
    assert len(codes) == len(set(codes))
    assert set(codes) == set(ErrorCode) - {ErrorCode.NONE}


@pytest.mark.parametrize(
    ("name", "code", "retriable"),
    [  # values from Kafka's Errors.java and whether its exception extends RetriableException
        ("UNKNOWN_SERVER_ERROR", -1, False),
        ("OFFSET_OUT_OF_RANGE", 1, False),
        ("CORRUPT_MESSAGE", 2, True),
        ("UNKNOWN_TOPIC_OR_PARTITION", 3, True),
        ("NOT_LEADER_OR_FOLLOWER", 6, True),
        ("MESSAGE_TOO_LARGE", 10, False),
        ("NOT_ENOUGH_REPLICAS", 19, True),
        ("UNSUPPORTED_VERSION", 35, False),
        ("UNSUPPORTED_FOR_MESSAGE_FORMAT", 43, False),
        ("OUT_OF_ORDER_SEQUENCE_NUMBER", 45, False),
        ("DUPLICATE_SEQUENCE_NUMBER", 46, False),
        ("INVALID_PRODUCER_EPOCH", 47, False),
        ("CONCURRENT_TRANSACTIONS", 51, True),
        ("KAFKA_STORAGE_ERROR", 56, True),
        ("INVALID_RECORD", 87, False),
        ("PRODUCER_FENCED", 90, False),
        ("UNKNOWN_TOPIC_ID", 100, True),
        ("TRANSACTION_ABORTABLE", 120, False),
    ],
)
def test_known_codes_match_kafka(name, code, retriable):
    assert ErrorCode[name] == code
    assert error_class(code).code == code
    assert error_class(code).retriable is retriable
    assert is_retriable(code) is retriable


@pytest.mark.parametrize(
    ("cls", "code"),
    [
        (errors.CorruptMessageError, 2),
        (errors.UnknownTopicOrPartitionError, 3),
        (errors.MessageTooLargeError, 10),
        (errors.OffsetOutOfRangeError, 1),
        (errors.OutOfOrderSequenceNumberError, 45),
        (errors.InvalidProducerEpochError, 47),
        (errors.DuplicateSequenceNumberError, 46),
        (errors.UnsupportedVersionError, 35),
        (errors.InvalidRecordError, 87),
        (errors.UnsupportedForMessageFormatError, 43),
        (errors.UnknownServerError, -1),
        (errors.NetworkError, 13),
        (errors.KafkaStorageError, 56),
    ],
)
def test_class_names_follow_kafka_names(cls, code):
    assert cls.code == code
    assert error_class(code) is cls


def test_message_defaults_to_kafkas_text_and_can_be_given():
    assert str(errors.CorruptMessageError()).startswith("This message has failed its CRC checksum")
    assert "\n" not in str(errors.InvalidRequestError())
    err = errors.CorruptMessageError("stored crc 1, computed 2")
    assert str(err) == "stored crc 1, computed 2"
    assert err.code == ErrorCode.CORRUPT_MESSAGE


def test_none_is_not_an_error_and_unknown_codes_are_unknown_server_error():
    with pytest.raises(ValueError):
        error_class(0)
    assert not is_retriable(0)
    assert error_class(31999) is errors.UnknownServerError
    assert not is_retriable(31999)


def test_errors_are_raisable_and_catchable_as_kafka_errors():
    with pytest.raises(KafkaError) as caught:
        raise error_class(ErrorCode.NOT_COORDINATOR)()
    assert caught.value.code == ErrorCode.NOT_COORDINATOR
    assert caught.value.retriable
