"""The pytest plugin as a user's test suite meets it: pytest runs small test files that use its fixtures, with the
plugin loaded through its `pytest11` entry point (the installed package's metadata), as any project's pytest does."""

from __future__ import annotations

# pytester's in-process runs drop from sys.modules what they imported; asyncio imported again beside the C _asyncio
# that keeps the first copy's classes breaks every later asyncio.run (its CancelledError is another class). Here,
# before any run, asyncio is imported once for them all, as in a real session.
import asyncio  # noqa: F401
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"

pytest_plugins = ["pytester"]

FRESH_BROKER_PER_TEST = """
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from wirebroker.protocol.errors import UnknownTopicOrPartitionError

@pytest.mark.wirebroker(num_partitions=3)
def test_a_marked_broker(wirebroker):
    assert wirebroker.produce("orders", [b"third partition"], partition=2) == [0]  # auto-created with 3 partitions
    producer = Producer({"bootstrap.servers": wirebroker.bootstrap_servers})
    producer.produce("orders", b"hello", partition=0)
    producer.flush()
    consumer = Consumer({"bootstrap.servers": wirebroker.bootstrap_servers, "group.id": "g"})
    consumer.assign([TopicPartition("orders", 0, 0)])
    assert consumer.poll(10).value() == b"hello"
    consumer.close()

def test_the_next_test_has_a_fresh_broker(wirebroker):
    with pytest.raises(UnknownTopicOrPartitionError):
        wirebroker.read("orders")

@pytest.mark.wirebroker(process=True, auto_create_topics_enable=False)
def test_a_child_process_broker(wirebroker):
    assert wirebroker.child.poll() is None
    with pytest.raises(UnknownTopicOrPartitionError):
        wirebroker.produce("orders", [b"x"])
"""

SHARED_BROKER = """
import asyncio

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition as AioTopicPartition
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

seen = []

@pytest.mark.wirebroker(num_partitions=2)
def test_one(wirebroker_session, wirebroker_topic, wirebroker_topic_prefix):
    assert wirebroker_topic.startswith(wirebroker_topic_prefix)
    assert wirebroker_session.read(wirebroker_topic) == []
    assert wirebroker_session.produce(wirebroker_topic, [b"one"], partition=1) == [0]
    seen.append((wirebroker_session.bootstrap_servers, wirebroker_topic))

def test_two(wirebroker_session, wirebroker_topic):
    producer = KafkaProducer(bootstrap_servers=wirebroker_session.bootstrap_servers)
    producer.send(wirebroker_topic, b"two").get(timeout=10)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=wirebroker_session.bootstrap_servers, consumer_timeout_ms=10_000)
    consumer.assign([TopicPartition(wirebroker_topic, 0)])
    consumer.seek(TopicPartition(wirebroker_topic, 0), 0)
    assert next(consumer).value == b"two"
    consumer.close()
    seen.append((wirebroker_session.bootstrap_servers, wirebroker_topic))

def test_three(wirebroker_session, wirebroker_topic):
    async def round_trip():
        producer = AIOKafkaProducer(bootstrap_servers=wirebroker_session.bootstrap_servers)
        await producer.start()
        await producer.send_and_wait(wirebroker_topic, b"three", partition=0)
        await producer.stop()
        consumer = AIOKafkaConsumer(bootstrap_servers=wirebroker_session.bootstrap_servers)
        await consumer.start()
        consumer.assign([AioTopicPartition(wirebroker_topic, 0)])
        consumer.seek(AioTopicPartition(wirebroker_topic, 0), 0)
        message = await asyncio.wait_for(consumer.getone(), 10)
        await consumer.stop()
        return message.value

    assert asyncio.run(round_trip()) == b"three"
    seen.append((wirebroker_session.bootstrap_servers, wirebroker_topic))

def test_sets_a_fault_rule(wirebroker_session):
    wirebroker_session.faults.inject(api="Produce", error="NOT_LEADER_OR_FOLLOWER", count=1000)

def test_finds_no_rule_of_the_test_before(wirebroker_session, wirebroker_topic):
    assert wirebroker_session.faults.rules() == []
    assert wirebroker_session.produce(wirebroker_topic, [b"four"]) == [0]

def test_one_broker_three_namespaces():
    brokers, topics = zip(*seen)
    assert len(set(brokers)) == 1 and len(set(topics)) == 3
"""


def test_fresh_brokers_configured_by_markers(pytester):
    pytester.makepyfile(FRESH_BROKER_PER_TEST)
    pytester.runpytest("--strict-markers", "-p", "no:cacheprovider").assert_outcomes(passed=3)


def test_a_session_broker_with_a_namespace_per_test(pytester):
    pytester.makepyfile(SHARED_BROKER)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=6)


def test_ini_options_choose_the_mode_and_the_configuration(pytester):
    pytester.makeini("[pytest]\nwirebroker_mode = process\nwirebroker_config =\n    num.partitions=2\n")
    pytester.makepyfile("""
        def test_configured(wirebroker):
            assert wirebroker.child is not None
            assert wirebroker.produce("auto", [b"x"], partition=1) == [0]
    """)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_bad_ini_option_is_an_error_naming_it(pytester):
    pytester.makeini("[pytest]\nwirebroker_mode = docker\n")
    pytester.makepyfile("def test_it(wirebroker): pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*wirebroker_mode = 'docker': it is one of thread, process*"])


def test_a_session_that_uses_no_broker_loads_none(pytester):
    """The plugin is loaded in every session (the project's own too): it must cost next to nothing there."""
    pytester.makepyfile("""
        import sys

        def test_nothing_but_the_plugin_is_loaded(request):
            assert request.config.pluginmanager.has_plugin("wirebroker")
            assert "wirebroker.pytest_plugin" in sys.modules
            assert [m for m in sys.modules if m.startswith(("wirebroker.embedded", "wirebroker.server"))] == []
    """)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_readme_examples_pass(pytester):
    section = README.read_text().split("## In your tests", 1)[1].split("\n## ", 1)[0]
    examples = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert len(examples) == 2
    pytester.makepyfile(**{f"test_readme_{i}": example for i, example in enumerate(examples)})
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)
