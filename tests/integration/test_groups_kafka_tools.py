"""Kafka's own tools against our groups: DumpLogSegments decodes __consumer_offsets, kafka-consumer-groups lists
and describes groups with their lag. Kafka's jars come from Maven Central into the compat cache
(`python -m compat_tests` installs them)."""

from __future__ import annotations

import json
import re

import kafka

from compat_tests.reference_kafka import install_jars, run_tool
from tests.integration.group_clients import create_topic, know_the_topic_before_joining, produce

CONSUMER_GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
DUMP_LOG_SEGMENTS = "org.apache.kafka.tools.DumpLogSegments"


def consume_and_commit(bootstrap: str, group: str, topic: str, count: int) -> None:
    consumer = kafka.KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                                   enable_auto_commit=False, max_poll_records=count)
    know_the_topic_before_joining(consumer, topic)
    got = 0
    while got < count:
        got += sum(len(records) for records in consumer.poll(1000).values())
    consumer.commit()
    consumer.close()


def test_kafka_tools_read_our_groups_and_offsets(broker_factory):
    jars = install_jars()
    broker = broker_factory(**{"offsets.topic.num.partitions": "1"})
    create_topic(broker.bootstrap, "tools", 1)
    produce(broker.bootstrap, "tools", 10, 1)
    consume_and_commit(broker.bootstrap, "tools-group", "tools", 10)
    produce(broker.bootstrap, "tools", 5, 1, tag="more-")

    listed = run_tool(jars, CONSUMER_GROUP_COMMAND, ["--bootstrap-server", broker.bootstrap, "--list"], check=True)
    assert "tools-group" in listed.stdout.split()
    described = run_tool(jars, CONSUMER_GROUP_COMMAND,
                         ["--bootstrap-server", broker.bootstrap, "--describe", "--group", "tools-group"], check=True)
    row = next(line.split() for line in described.stdout.splitlines() if line.startswith("tools-group"))
    # GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG ...
    assert row[1:6] == ["tools", "0", "10", "15", "5"]

    broker.stop()
    segment = broker.data_dir / "__consumer_offsets-0" / "00000000000000000000.log"
    dumped = run_tool(jars, DUMP_LOG_SEGMENTS, ["--offsets-decoder", "--files", str(segment)], check=True).stdout
    records = [(json.loads(key), json.loads(payload)) for key, payload in
               re.findall(r"key: (\{.*?\}) payload: (\{.*\}|null)$", dumped, re.MULTILINE)]
    offsets = [(k["data"], v["version"], v["data"]["offset"]) for k, v in records if k["type"] == "1"]
    assert offsets == [({"group": "tools-group", "topic": "tools", "partition": 0}, "3", 10)]
    groups = [(v["version"], v["data"]["generation"], len(v["data"]["members"])) for k, v in records
              if k["type"] == "2"]
    assert groups[0] == ("3", 1, 1)  # the first generation, with its member
    version, generation, members = groups[-1]
    assert (version, members) == ("3", 0) and generation > 1  # empty once the consumer left
