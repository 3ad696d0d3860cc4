"""SaslHandshake: API key 17, versions 0-1.

Behaviour: the network thread answers SaslHandshake itself on a SASL listener (network/authenticator.py, Kafka's
SaslServerAuthenticator). One that reaches the handlers came where no SASL exchange is open (a PLAINTEXT or SSL
listener, or after authentication without re-authentication): ILLEGAL_SASL_STATE, as Kafka's KafkaApis answers.
Version notes: v1 (KIP-152) wraps the tokens that follow in SaslAuthenticate requests; v0 sends them raw.
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.sasl_handshake import (
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)


def handle(ctx: RequestContext, request: SaslHandshakeRequest) -> SaslHandshakeResponse:
    return SaslHandshakeResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])


serve(SaslHandshakeRequest.API_KEY, handle)
