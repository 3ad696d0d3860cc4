"""Which test files exercise each API key, for `/compat`: read from the repository's test tree when it is asked
(about 0.2 s, once per process), so it is never stale; an installed package without the tree has no answer.

A static reading, cheap and deterministic, not a trace: a file exercises an API when its text names the API's
request class (`ProduceRequest`: the raw protocol tests), its name in snake case when that has two words or more
(`describe_producers`), or a call of a client library or tool that sends it (CLIENT_CALLS: kafka-python,
confluent-kafka, aiokafka, the embedded broker's helpers, kcat and Kafka's shell tools). The files read are the
Python files under tests/ and compat_tests/.
"""

from __future__ import annotations

import re
from pathlib import Path

from wirebroker.protocol.messages import API_SPECS

ROOT = Path(__file__).resolve().parents[3]
TEST_DIRS = ("tests", "compat_tests")

_CLIENTS = ("KafkaProducer(", "KafkaConsumer(", "KafkaAdminClient(", "AIOKafkaProducer(", "AIOKafkaConsumer(",
            "AdminClient(", "Producer({", "Consumer({", "kcat")
_GROUPS = ("group_id=", '"group.id"', "--group")
_TRANSACTIONS = ("transactional_id", '"transactional.id"', "init_transactions")
# What sends each API besides its request class, by API name.
CLIENT_CALLS: dict[str, tuple[str, ...]] = {
    "ApiVersions": _CLIENTS,
    "Metadata": _CLIENTS + ("list_topics", "partitions_for"),
    "Produce": ("KafkaProducer(", "AIOKafkaProducer(", "Producer({", ".produce(", "kafka-console-producer", '"-P"'),
    "Fetch": ("KafkaConsumer(", "AIOKafkaConsumer(", "Consumer({", ".read(", "kafka-console-consumer", '"-C"'),
    "ListOffsets": ("seek_to_end", "seek_to_beginning", "offsets_for_times", "end_offsets", "beginning_offsets",
                    "get_watermark_offsets", "auto_offset_reset", "kafka-get-offsets"),
    "FindCoordinator": _GROUPS + _TRANSACTIONS,
    "JoinGroup": _GROUPS,
    "SyncGroup": _GROUPS,
    "Heartbeat": _GROUPS,
    "LeaveGroup": _GROUPS,
    "OffsetFetch": _GROUPS + ("list_consumer_group_offsets", "committed("),
    "OffsetCommit": ("commit(", "enable_auto_commit", "kafka-consumer-groups"),
    "ListGroups": ("list_consumer_groups", "wait_for_group_stable", "kafka-consumer-groups"),
    "DescribeGroups": ("describe_consumer_groups", "kafka-consumer-groups"),
    "DeleteGroups": ("delete_consumer_groups",),
    "OffsetDelete": ("delete_consumer_group_offsets",),
    "ConsumerGroupHeartbeat": ('"group.protocol"', "group_protocol"),
    "CreateTopics": ("create_topics", "create_topic(", "NewTopic(", "kafka-topics"),
    "DeleteTopics": ("delete_topics", "--delete"),
    "CreatePartitions": ("create_partitions", "NewPartitions("),
    "DeleteRecords": ("delete_records", "kafka-delete-records"),
    "DescribeConfigs": ("describe_configs", "kafka-configs"),
    "AlterConfigs": ("alter_configs",),
    "IncrementalAlterConfigs": ("incremental_alter_configs", "--alter --add-config"),
    "DescribeCluster": ("describe_cluster",),
    "DescribeLogDirs": ("describe_log_dirs", "kafka-log-dirs"),
    "ElectLeaders": ("elect_leaders", "perform_leader_election", "kafka-leader-election"),
    "DescribeAcls": ("describe_acls", "kafka-acls"),
    "CreateAcls": ("create_acls", "kafka-acls"),
    "DeleteAcls": ("delete_acls", "kafka-acls"),
    "InitProducerId": _TRANSACTIONS + ("enable_idempotence", '"enable.idempotence"'),
    "AddPartitionsToTxn": _TRANSACTIONS,
    "EndTxn": ("commit_transaction", "abort_transaction"),
    "AddOffsetsToTxn": ("send_offsets_to_transaction",),
    "TxnOffsetCommit": ("send_offsets_to_transaction",),
    "DescribeTransactions": ("kafka-transactions",),
    "ListTransactions": ("kafka-transactions",),
    "DescribeProducers": ("describe-producers",),
}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def terms(name: str) -> tuple[str, ...]:
    """The strings whose presence in a test file says it exercises API `name`."""
    snake = _snake(name)
    return (f"{name}Request", *((snake,) if "_" in snake else ()), *CLIENT_CALLS.get(name, ()))


def has_test_tree(root: Path = ROOT) -> bool:
    return (root / "tests").is_dir()


def exercised_by(root: Path = ROOT) -> dict[int, list[str]]:
    """API key -> the test files (relative to the repo) that exercise it, sorted; keys no file exercises left out."""
    files = sorted(path for directory in TEST_DIRS for path in (root / directory).rglob("*.py")
                   if "__pycache__" not in path.parts)
    texts = {path.relative_to(root).as_posix(): path.read_text(errors="replace") for path in files}
    table = {}
    for key, spec in sorted(API_SPECS.items()):
        wanted = terms(spec.name)
        exercising = [name for name, text in texts.items() if any(term in text for term in wanted)]
        if exercising:
            table[key] = exercising
    return table
