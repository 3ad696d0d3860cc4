"""SaslAuthenticate: API key 36, versions 0-2.

Behaviour: the network thread answers SaslAuthenticate itself during a SASL exchange (network/authenticator.py).
One that reaches the handlers has no exchange to belong to: ILLEGAL_SASL_STATE, as Kafka's KafkaApis answers.
Version notes: v1 adds session_lifetime_ms (KIP-368 re-authentication); v2 is flexible.
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)


def handle(ctx: RequestContext, request: SaslAuthenticateRequest) -> SaslAuthenticateResponse:
    return SaslAuthenticateResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE, auth_bytes=b"",
                                    error_message="Unexpected SaslAuthenticate request: no SASL exchange is open")


serve(SaslAuthenticateRequest.API_KEY, handle)
