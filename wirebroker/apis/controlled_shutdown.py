"""ControlledShutdown: API key 7, versions 1-3 (inter-broker: served, not advertised to clients).

Behaviour (Kafka's KafkaController.shutdownBroker, ZooKeeper mode):
- A broker about to stop (SIGTERM with controlled.shutdown.enable) asks the controller to move its leaderships
  away first: each partition it leads with more than one replica gets a new leader from the other live ISR
  members (leader epoch bumped, LeaderAndIsr to the replicas, UpdateMetadata to every broker), it leaves the ISR of
  the partitions it follows, and it is told to stop following them (StopReplica without deletion).
- The answer lists the partitions it still leads (no other in-sync replica could take over); the broker retries
  (controlled.shutdown.max.retries) and then stops anyway.
- NOT_CONTROLLER on a broker that is not the active controller; BROKER_NOT_AVAILABLE for a broker that is not
  registered; STALE_BROKER_EPOCH for an epoch older than its registration's.
- The answer comes from the controller's event thread once the changes are written.
- With an authorizer the sender needs CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
Version notes:
- v0 is not served (its request header has no client id); v2+ carry the broker epoch (KIP-380); v3+ flexible.
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation
from wirebroker.log.files import TopicPartition
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.controlled_shutdown import (
    ControlledShutdownRequest,
    ControlledShutdownResponse,
)

API_KEY = 7
MIN_VERSION = 1


def handle(ctx: RequestContext, request: ControlledShutdownRequest) -> ControlledShutdownResponse | None:
    require(ctx, AclOperation.CLUSTER_ACTION)
    controller = ctx.broker.kafka_controller
    if controller is None or not controller.is_active:
        return ControlledShutdownResponse(error_code=ErrorCode.NOT_CONTROLLER)

    def respond(error_code: int, remaining: list[TopicPartition]) -> None:
        ctx.respond(ControlledShutdownResponse(error_code=error_code, remaining_partitions=[
            ControlledShutdownResponse.RemainingPartition(topic_name=tp.topic, partition_index=tp.partition)
            for tp in remaining]))

    controller.controlled_shutdown(request.broker_id, request.broker_epoch, respond)
    return None


serve(API_KEY, handle, min_version=MIN_VERSION, advertised=False)
