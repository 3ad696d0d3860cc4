"""ApiVersions: API key 18, versions 0-4.

Behaviour:
- Lists every API key this broker serves with the versions it serves (apis/registry.py, computed from the API
  modules and schemas/manifest.json, never typed here), or, when emulating an Apache Kafka release
  (`wirebroker.emulate.kafka.version`), that release's list narrowed to what this broker serves (apis/emulation.py).
- A request at a version newer than the broker knows is answered at v0 with UNSUPPORTED_VERSION and ApiVersions' own
  range only, so the client asks again at a version both sides speak and gets the full answer, features included
  (KIP-511; Kafka's ApiVersionsRequest.getErrorResponse). The dispatcher calls `unsupported_version_response` for
  it, without decoding the body.
- v3+: client_software_name/version must match Kafka's pattern, else INVALID_REQUEST (KIP-511).
Version notes:
- The answer depends only on the API table, the version and the error code: each is built and encoded once
  (`EncodedMessage`), and every later request gets those bytes (a throttled answer is encoded afresh).
- v1+ carries throttle_time_ms; v3+ is flexible and adds the feature fields (tagged): this broker's
  (emulation.OWN_FEATURE_LEVELS: share.version and group.version at 1, as Kafka 4.3.1 finalizes them), the emulated
  release's when emulating; v3 leaves out the supported features whose min version is 0 as Kafka does (v4 lists
  them, KAFKA-17011).
"""

from __future__ import annotations

import functools
import re

from wirebroker.apis.context import RequestContext
from wirebroker.apis.emulation import ApiTable, api_table
from wirebroker.apis.registry import serve
from wirebroker.config import EMULATE_KEY
from wirebroker.protocol.encoded import EncodedAnswer, EncodedMessage
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse

API_KEY = 18

# Below v4 Kafka leaves out the supported features whose min version is 0, which older clients cannot parse
# (KAFKA-17011, ApiVersionsResponse.maybeFilterSupportedFeatureKeys).
HIDES_NO_FEATURE_VERSION = 4
# Kafka's ApiVersionsRequest.isValid: letters, digits, '-' and '.', starting and ending alphanumeric.
_SOFTWARE_PATTERN = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")


# (id of the table, version, error code) -> (the table, its answer). The tables live as long as the process
# (emulation.api_table builds each once), and the entry holds its table, so an id is never reused for another.
_ENCODED: dict[tuple[int, int, int], tuple[ApiTable, EncodedMessage]] = {}


def _encoded(table: ApiTable, error_code: int, version: int) -> EncodedAnswer:
    key = (id(table), version, error_code)
    entry = _ENCODED.get(key)
    if entry is None or entry[0] is not table:
        entry = _ENCODED[key] = (table, EncodedMessage(_response(table, error_code, version), version))
    return entry[1].answer()


def _response(table: ApiTable, error_code: int, version: int) -> ApiVersionsResponse:
    if error_code == ErrorCode.UNSUPPORTED_VERSION:  # ApiVersions' own range only: the client asks again
        low, high = table.advertised[API_KEY]
        return ApiVersionsResponse(error_code=error_code, api_keys=[
            ApiVersionsResponse.ApiVersion(api_key=API_KEY, min_version=low, max_version=high)])
    supported = [f for f in table.supported_features if version >= HIDES_NO_FEATURE_VERSION or f.min_version > 0]
    return ApiVersionsResponse(
        error_code=error_code,
        api_keys=[ApiVersionsResponse.ApiVersion(api_key=k, min_version=lo, max_version=hi)
                  for k, (lo, hi) in table.advertised.items()],
        supported_features=[ApiVersionsResponse.SupportedFeatureKey(name=f.name, min_version=f.min_version,
                                                                    max_version=f.max_version)
                            for f in supported],
        finalized_features_epoch=table.finalized_features_epoch,
        finalized_features=[ApiVersionsResponse.FinalizedFeatureKey(name=f.name, min_version_level=f.min_version,
                                                                    max_version_level=f.max_version)
                            for f in table.finalized_features],
    )


def handle(ctx: RequestContext, request: ApiVersionsRequest) -> EncodedAnswer:
    table = api_table(ctx.broker.config[EMULATE_KEY])
    version = ctx.header.api_version
    if version >= 3 and not _valid_software(request.client_software_name, request.client_software_version):
        return _encoded(table, ErrorCode.INVALID_REQUEST, version)
    return _encoded(table, ErrorCode.NONE, version)


# A client names the same software on every connection: two regular expressions per request cost more than the rest
# of the handler, a cached answer a dictionary lookup.
@functools.lru_cache(maxsize=1024)
def _valid_software(name: str, version: str) -> bool:
    return bool(_SOFTWARE_PATTERN.match(name) and _SOFTWARE_PATTERN.match(version))


def unsupported_version_response(table: ApiTable) -> EncodedAnswer:
    """The answer at v0 to a request at a version newer than the broker knows: ApiVersions' own range."""
    return _encoded(table, ErrorCode.UNSUPPORTED_VERSION, 0)


serve(API_KEY, handle)
