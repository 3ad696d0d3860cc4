"""Group configs (GROUP resources of IncrementalAlterConfigs and DescribeConfigs): the share-group keys of Kafka's
GroupConfig (coordinator/share_group_configs.py), kept per group id.

SET and DELETE a key; APPEND and SUBTRACT are INVALID_CONFIG (no group key is a list); an unknown key or a bad
value is INVALID_CONFIG with Kafka's message; validate_only checks and changes nothing. The group need not exist,
as in Kafka (a config set before the first member joins is what `share.auto.offset.reset` needs). Described, every
key has its value: the group's (source DYNAMIC_GROUP_CONFIG), else the broker's `group.<key>` or Kafka's default
(DEFAULT_CONFIG).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from wirebroker.apis.context import RequestContext
from wirebroker.apis.share_services import share_services
from wirebroker.apis.topic_configs import ConfigSource, ConfigType
from wirebroker.protocol.errors import InvalidRequestError

log = logging.getLogger(__name__)

DYNAMIC_GROUP_CONFIG = 8  # DescribeConfigsResponse.ConfigSource for a group's own config (KIP-848)
# Each described key: its type and its default when the group sets none (a broker key, or a value).
_DESCRIBED = {
    "share.auto.offset.reset": (ConfigType.STRING, None, "latest"),
    "share.delivery.count.limit": (ConfigType.INT, "group.share.delivery.count.limit", None),
    "share.heartbeat.interval.ms": (ConfigType.INT, "group.share.heartbeat.interval.ms", None),
    "share.isolation.level": (ConfigType.STRING, None, "read_uncommitted"),
    "share.record.lock.duration.ms": (ConfigType.INT, "group.share.record.lock.duration.ms", None),
    "share.session.timeout.ms": (ConfigType.INT, "group.share.session.timeout.ms", None),
}


def describe_group_configs(ctx: RequestContext, group_id: str) -> list[tuple[str, str, int, ConfigType]]:
    """(key, value, source, type) of every group key, in name order."""
    if not group_id:
        raise InvalidRequestError("Group name must not be empty")
    own = share_services(ctx.broker).group_configs.of(group_id)
    described = []
    for key, (config_type, broker_key, default) in sorted(_DESCRIBED.items()):
        if key in own:
            described.append((key, own[key], DYNAMIC_GROUP_CONFIG, config_type))
        else:
            value = str(ctx.broker.config[broker_key]) if broker_key else default
            described.append((key, value, ConfigSource.DEFAULT_CONFIG, config_type))
    return described


def alter_group_configs(ctx: RequestContext, group_id: str, changes: Mapping[str, str | None],
                        validate_only: bool) -> None:
    """Set (a None value: delete) the group's keys."""
    if not group_id:
        raise InvalidRequestError("Group name must not be empty")
    configs = share_services(ctx.broker).group_configs
    configs.validate(changes)
    if validate_only:
        return
    configs.alter(group_id, changes)
    log.info("Group configs of %s changed at the request of %s: %s", group_id, ctx.client, dict(changes))
