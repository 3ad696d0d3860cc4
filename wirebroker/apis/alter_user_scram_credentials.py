"""AlterUserScramCredentials: API key 51, version 0 (KIP-554); what `kafka-configs.sh --alter --add-config
'SCRAM-SHA-512=[password=...]' --entity-type users --entity-name alice` sends.

Behaviour (Kafka's ScramControlManager.alterCredentials):
- The client sends the salt, the iterations and SaltedPassword = Hi(password, salt, i), never the password; the
  broker keeps StoredKey and ServerKey derived from it (cluster/scram_credentials.py).
- Checked per user, and a user's changes are applied only if all of them pass: an empty name or an empty salt or
  salted password: UNACCEPTABLE_CREDENTIAL; an unknown mechanism: UNSUPPORTED_SASL_MECHANISM; iterations outside
  4096-16384: UNACCEPTABLE_CREDENTIAL; the same user and mechanism twice in the request: DUPLICATE_RESOURCE;
  deleting a credential that does not exist: RESOURCE_NOT_FOUND.
- One result per user named, in the order first named.
- With an authorizer the caller needs ALTER on the cluster, else every user named gets CLUSTER_AUTHORIZATION_FAILED,
  users in name order (Kafka's controller refuses it; the request's getErrorResponse).
"""

from __future__ import annotations

from collections import Counter

from wirebroker.apis.authorization import refused_request_message
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
)
from wirebroker.security.scram_credential import MECHANISMS_BY_TYPE, ScramCredential

_Result = AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult


def handle(ctx: RequestContext, request: AlterUserScramCredentialsRequest) -> AlterUserScramCredentialsResponse:
    store = ctx.broker.scram_credentials
    alterations = [(d.name, d.mechanism) for d in request.deletions] + [(u.name, u.mechanism)
                                                                          for u in request.upsertions]
    if not ctx.authorize(AclOperation.ALTER):
        message = refused_request_message(ctx)
        return AlterUserScramCredentialsResponse(results=[
            _Result(user=user, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message=message)
            for user in sorted({user for user, _ in alterations})])
    counts = Counter(alterations)
    errors: dict[str, tuple[int, str]] = {}  # user -> its first error

    def refuse(user: str, code: int, message: str) -> None:
        errors.setdefault(user, (code, message))

    for user, mechanism in alterations:
        if not user:
            refuse(user, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
        elif mechanism not in MECHANISMS_BY_TYPE:
            refuse(user, ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
        elif counts[(user, mechanism)] > 1:
            refuse(user, ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request")
    for deletion in request.deletions:
        mechanism = MECHANISMS_BY_TYPE.get(deletion.mechanism)
        if mechanism is not None and store.credential(mechanism.name, deletion.name) is None:
            refuse(deletion.name, ErrorCode.RESOURCE_NOT_FOUND,
                   "Attempt to delete a user credential that does not exist")
    upsertions = []
    for upsertion in request.upsertions:
        mechanism = MECHANISMS_BY_TYPE.get(upsertion.mechanism)
        if mechanism is None:
            continue
        if not upsertion.salt or not upsertion.salted_password:
            refuse(upsertion.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Salt and salted password must not be empty")
        elif upsertion.iterations < mechanism.min_iterations:
            refuse(upsertion.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
        elif upsertion.iterations > mechanism.max_iterations:
            refuse(upsertion.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
        else:
            credential = ScramCredential.from_salted_password(mechanism, bytes(upsertion.salted_password),
                                                              bytes(upsertion.salt), upsertion.iterations)
            upsertions.append((upsertion.name, mechanism.name, credential))
    store.alter([u for u in upsertions if u[0] not in errors],
                [(d.name, MECHANISMS_BY_TYPE[d.mechanism].name) for d in request.deletions
                 if d.name not in errors and d.mechanism in MECHANISMS_BY_TYPE])
    results = []
    for user in dict.fromkeys(user for user, _ in alterations):
        code, message = errors.get(user, (ErrorCode.NONE, None))
        results.append(_Result(user=user, error_code=code, error_message=message))
    return AlterUserScramCredentialsResponse(results=results)


serve(AlterUserScramCredentialsRequest.API_KEY, handle)
