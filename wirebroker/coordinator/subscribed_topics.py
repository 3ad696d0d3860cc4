"""What a consumer group's members subscribe to, resolved against the topics that exist (KIP-848).

A member subscribes by topic names, by a regular expression, or both. The expression must match a topic name
whole and is resolved at each use, so a new matching topic joins the subscription (and moves the group epoch);
internal topics never match. Kafka uses RE2/J syntax; Python's `re` agrees on the patterns clients send (literals,
classes, `.*`, alternation). The group's subscription metadata is what the assignor works from: each subscribed
topic that exists, with its id and partition count.
"""

from __future__ import annotations

import re

from wirebroker.coordinator.consumer_group import ConsumerGroup, ConsumerMember
from wirebroker.coordinator.group_runtime import TopicImage


def member_topics(member: ConsumerMember, topics: TopicImage) -> set[str]:
    """The topics a member subscribes to: its names, and the topics its regular expression matches whole
    (internal topics excluded), resolved against the topics that exist now."""
    subscribed = set(member.subscribed_topic_names)
    if member.subscribed_topic_regex:
        pattern = re.compile(member.subscribed_topic_regex)
        subscribed.update(t.name for t in topics.topics() if not t.is_internal and pattern.fullmatch(t.name))
    return subscribed


def subscription_metadata(group: ConsumerGroup, topics: TopicImage) -> dict[str, tuple[bytes, int]]:
    """Topic name -> (topic id, partition count) for every topic a member subscribes to that exists."""
    metadata = {}
    for name in sorted(set().union(*(member_topics(m, topics) for m in group.members.values()))):
        topic = topics.topic(name)
        if topic is not None:
            metadata[name] = (topic.topic_id, topic.partitions)
    return metadata
