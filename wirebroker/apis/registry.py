"""The API registry: which APIs this broker serves, at which versions, and with which handler.

Each API module registers itself once at its end, `serve(API_KEY, handle)` (kfake's `regKey`), naming a
`min_version` or `max_version` only where it serves less than schemas/manifest.json allows. The package
`wirebroker.apis` registers every client-facing API with `serve_on_first_request` (at the manifest's versions), so
the registry is complete as soon as anything in the package is imported, yet an API's module (and its generated
codec) is imported only when a client first asks for it: a broker starts without the APIs its clients never use.
ApiVersions answers from the registry and the dispatcher routes by it; nothing is typed twice.

Inter-broker APIs (LeaderAndIsr, UpdateMetadata, StopReplica) register with `advertised=False`: they are served at
the versions of their schema (the manifest lists only what clients are told of) and left out of ApiVersions, so
client libraries that infer a broker version from the advertised list see the same list as before.
"""

from __future__ import annotations

import importlib
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
_on_first_request: set[int] = set()  # keys registered by serve_on_first_request whose module has not yet served


def serve(key: int, handle: Callable[[Any, Any], Any], *, min_version: int | None = None,
          max_version: int | None = None, advertised: bool = True) -> None:
    """Register the handler of API `key`, served at the manifest's versions (the schema's for an API not
    advertised) narrowed by min/max_version."""
    spec = API_SPECS[key]
    low, high = ADVERTISABLE_VERSIONS[key] if advertised else (spec.min_version, spec.max_version)
    api = Api(key, spec.name, max(low, min_version if min_version is not None else low),
              min(high, max_version if max_version is not None else high), handle, advertised)
    if key in _on_first_request:
        registered = _served[key]
        # ApiVersions may already have told clients the versions registered for it
        if (api.min_version, api.max_version, api.advertised) != (registered.min_version, registered.max_version,
                                                                    registered.advertised):
            raise ValueError(f"{spec.name} serves v{api.min_version}-{api.max_version}, not the v"
                             f"{registered.min_version}-{registered.max_version} of schemas/manifest.json it was "
                             f"registered at before its module loaded: narrow its versions in the manifest")
        _on_first_request.discard(key)
    elif key in _served:
        raise ValueError(f"API key {key} ({spec.name}) is registered twice")
    _served[key] = api


def serve_on_first_request(key: int, module: str) -> None:
    """Register API `key` at the manifest's versions, served by `module`, which is imported at the API's first
    request: its `serve` then takes the key over (concurrent first requests wait on the import lock)."""

    def import_then_handle(ctx: Any, request: Any) -> Any:
        importlib.import_module(module)
        if key in _on_first_request:
            raise RuntimeError(f"{module} did not register API key {key} ({API_SPECS[key].name})")
        return _served[key].handle(ctx, request)

    serve(key, import_then_handle)
    _on_first_request.add(key)


def supported_versions() -> dict[int, tuple[int, int]]:
    """API key -> (min, max) for every advertised API, in key order: what ApiVersions lists."""
    return {key: (api.min_version, api.max_version) for key, api in sorted(_served.items()) if api.advertised}
