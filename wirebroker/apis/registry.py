"""The API registry: which APIs this broker serves, at which versions, and with which handler.

Each API module registers itself once at its end, `serve(API_KEY, handle)` (kfake's `regKey`), naming a
`min_version` or `max_version` only where it serves less than schemas/manifest.json allows. The package
`wirebroker.apis` imports every API module, so the registry is complete as soon as anything in the package is
imported. ApiVersions answers from it and the dispatcher routes by it; nothing is typed twice.

Inter-broker APIs (LeaderAndIsr, UpdateMetadata, StopReplica) register with `advertised=False`: they are served at
the versions of their schema (the manifest lists only what clients are told of) and left out of ApiVersions, so
client libraries that infer a broker version from the advertised list see the same list as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from wirebroker.protocol.messages import ADVERTISABLE_VERSIONS, API_SPECS


@dataclass(frozen=True, slots=True)
class Api:
    key: int
    name: str
    min_version: int
    max_version: int
    # handle(ctx, request) -> a response message, NO_RESPONSE, CloseConnection, or None (answered later)
    handle: Callable[[Any, Any], Any]
    advertised: bool = True  # listed in ApiVersions


_served: dict[int, Api] = {}
SERVED: Mapping[int, Api] = MappingProxyType(_served)


def serve(key: int, handle: Callable[[Any, Any], Any], *, min_version: int | None = None,
          max_version: int | None = None, advertised: bool = True) -> None:
    """Register the handler of API `key`, served at the manifest's versions (the schema's for an API not
    advertised) narrowed by min/max_version."""
    if key in _served:
        raise ValueError(f"API key {key} ({API_SPECS[key].name}) is registered twice")
    spec = API_SPECS[key]
    low, high = ADVERTISABLE_VERSIONS[key] if advertised else (spec.min_version, spec.max_version)
    _served[key] = Api(key, spec.name, max(low, min_version if min_version is not None else low),
                       min(high, max_version if max_version is not None else high), handle, advertised)


def supported_versions() -> dict[int, tuple[int, int]]:
    """API key -> (min, max) for every advertised API, in key order: what ApiVersions lists."""
    return {key: (api.min_version, api.max_version) for key, api in sorted(_served.items()) if api.advertised}
