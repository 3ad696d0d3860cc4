"""Create the benchmark's topics before the load starts, the same way on every broker (CreateTopics via kafka-python).

Topics are created explicitly rather than by auto-creation so that each workload gets its own partition count
whatever the broker's num.partitions, and the load tools never time a topic's creation.
"""

from __future__ import annotations

import time

from kafka.admin import KafkaAdminClient, NewTopic

READY_TIMEOUT_S = 60.0
READY_POLL_S = 0.1


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    """Create a single-replica topic and wait until every partition has a leader."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="wirebroker-bench")
    try:
        admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not _has_leaders(admin, name, partitions):
            if time.monotonic() > deadline:
                raise TimeoutError(f"topic {name} has no leader for each of its {partitions} partitions after "
                                   f"{READY_TIMEOUT_S:.0f}s")
            time.sleep(READY_POLL_S)
    finally:
        admin.close()


def _has_leaders(admin: KafkaAdminClient, name: str, partitions: int) -> bool:
    (topic,) = admin.describe_topics([name])
    led = [p for p in topic.get("partitions", []) if p.get("leader_id", -1) >= 0]
    return topic.get("error_code", 0) == 0 and len(led) == partitions
