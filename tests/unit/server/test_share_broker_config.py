"""The share groups' broker keys, checked together as Kafka's ShareGroupConfig checks them at start-up."""

from __future__ import annotations

import pytest

from wirebroker.config import BrokerConfig, ConfigError


def test_fewer_share_sessions_than_share_group_members_is_refused_as_kafka_refuses_it():
    with pytest.raises(ConfigError, match="group.share.max.share.sessions must be greater than or equal to"):
        BrokerConfig({"group.share.max.share.sessions": "100", "group.share.max.size": "200"})
    config = BrokerConfig({"group.share.max.share.sessions": "200", "group.share.max.size": "200"})
    assert config["group.share.max.share.sessions"] == 200
    assert BrokerConfig({})["group.share.max.share.sessions"] == 2000  # Kafka's default
    assert BrokerConfig({})["share.coordinator.state.topic.min.isr"] == 2
