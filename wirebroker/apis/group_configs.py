"""Group configs (GROUP resources of IncrementalAlterConfigs): the share-group keys of Kafka's GroupConfig
(coordinator/share_group_configs.py), kept per group id.

SET and DELETE a key; APPEND and SUBTRACT are INVALID_CONFIG (no group key is a list); an unknown key or a bad
value is INVALID_CONFIG with Kafka's message; validate_only checks and changes nothing. The group need not exist,
as in Kafka (a config set before the first member joins is what `share.auto.offset.reset` needs).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from wirebroker.apis.context import RequestContext
from wirebroker.apis.share_services import share_services
from wirebroker.protocol.errors import InvalidRequestError

log = logging.getLogger(__name__)


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
