"""DescribeUserScramCredentials: API key 50, version 0 (KIP-554).

Behaviour (Kafka's ScramControlManager.describeScramCredentials):
- No users named (null or empty): every user with a credential, each with its mechanisms and iterations (never the
  salt or keys).
- Users named: each one's credentials; one without any gets RESOURCE_NOT_FOUND; a user named twice gets
  DUPLICATE_RESOURCE, once.
- With an authorizer the caller needs DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED at the top
  level and in one nameless result per user named, without a message (KafkaApis, the request's getErrorResponse).
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation
from wirebroker.protocol.errors import (
    ErrorCode,
)
from wirebroker.protocol.messages.describe_user_scram_credentials import (
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)
from wirebroker.security.scram_credential import MECHANISMS

_Result = DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult
_Info = DescribeUserScramCredentialsResponse.CredentialInfo


def handle(ctx: RequestContext, request: DescribeUserScramCredentialsRequest) -> DescribeUserScramCredentialsResponse:
    if not ctx.authorize(AclOperation.DESCRIBE):
        return _refused(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    users = ctx.broker.scram_credentials.users()
    names = [u.name for u in request.users or []]
    results = []
    if not names:
        results = [_described(user, users[user]) for user in sorted(users)]
    for name in dict.fromkeys(names):
        if names.count(name) > 1:
            results.append(_Result(user=name, error_code=ErrorCode.DUPLICATE_RESOURCE, credential_infos=[],
                                   error_message="Cannot describe SCRAM credentials for the same user twice in a "
                                                 "single request"))
        elif name not in users:
            results.append(_Result(user=name, error_code=ErrorCode.RESOURCE_NOT_FOUND, credential_infos=[],
                                   error_message=f"Attempt to describe a user credential that does not exist: {name}"))
        else:
            results.append(_described(name, users[name]))
    return DescribeUserScramCredentialsResponse(error_code=ErrorCode.NONE, results=results)


def _refused(request: DescribeUserScramCredentialsRequest, code: int) -> DescribeUserScramCredentialsResponse:
    # Kafka's ApiError drops an exception's message when it is the error's default one: no message, here too.
    return DescribeUserScramCredentialsResponse(error_code=code, error_message=None, results=[
        _Result(user="", error_code=code, error_message=None, credential_infos=[]) for _ in request.users or []])


def _described(user: str, credentials: dict) -> _Result:
    infos = [_Info(mechanism=MECHANISMS[m].type_code, iterations=c.iterations) for m, c in sorted(credentials.items())]
    return _Result(user=user, error_code=ErrorCode.NONE, error_message=None, credential_infos=infos)


serve(DescribeUserScramCredentialsRequest.API_KEY, handle)
