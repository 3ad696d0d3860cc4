"""ApiVersions: API key 18, versions 0-4.

Behaviour:
- Lists every API key this broker serves with the versions it serves (apis/registry.py, computed from the API
  modules and schemas/manifest.json, never typed here).
- A request at a version newer than the broker knows is answered at v0 with UNSUPPORTED_VERSION and the full list,
  so the client can pick a version both sides speak (KIP-511). The dispatcher calls
  `unsupported_version_response` for it, without decoding the body.
- v3+: client_software_name/version must match Kafka's pattern, else INVALID_REQUEST (KIP-511).
Version notes:
- v1+ carries throttle_time_ms; v3+ is flexible and adds the feature fields (tagged), left empty: this broker
  finalizes no feature levels.
"""

from __future__ import annotations

import re

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve, supported_versions
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse

API_KEY = 18

# Kafka's ApiVersionsRequest.isValid: letters, digits, '-' and '.', starting and ending alphanumeric.
_SOFTWARE_PATTERN = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")


def _api_keys() -> list[ApiVersionsResponse.ApiVersion]:
    return [ApiVersionsResponse.ApiVersion(api_key=k, min_version=lo, max_version=hi)
            for k, (lo, hi) in supported_versions().items()]


def handle(ctx: RequestContext, request: ApiVersionsRequest) -> ApiVersionsResponse:
    if ctx.api_version >= 3 and not (
        _SOFTWARE_PATTERN.match(request.client_software_name)
        and _SOFTWARE_PATTERN.match(request.client_software_version)
    ):
        return ApiVersionsResponse(error_code=ErrorCode.INVALID_REQUEST, api_keys=_api_keys())
    return ApiVersionsResponse(error_code=ErrorCode.NONE, api_keys=_api_keys())


def unsupported_version_response() -> ApiVersionsResponse:
    return ApiVersionsResponse(error_code=ErrorCode.UNSUPPORTED_VERSION, api_keys=_api_keys())


serve(API_KEY, handle)
