"""ListPartitionReassignments: API key 46, version 0.

Behaviour (Kafka's ControllerApis.handleListPartitionReassignments and
ReplicationControlManager.listPartitionReassignments):
- The ongoing reassignments of the named partitions (a null topic list: of every partition). With one broker no
  reassignment is ever in progress (AlterPartitionReassignments completes at once), so the answer lists none;
  unknown topics and partitions are left out silently, as in Kafka.
- The caller needs DESCRIBE on the cluster in Kafka; ACLs are not enforced here (cluster/acls.py).
Version notes:
- v0 only, flexible.
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.list_partition_reassignments import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)

API_KEY = 46


def handle(ctx: RequestContext, request: ListPartitionReassignmentsRequest) -> ListPartitionReassignmentsResponse:
    return ListPartitionReassignmentsResponse(error_code=ErrorCode.NONE, error_message=None, topics=[])


serve(API_KEY, handle)
