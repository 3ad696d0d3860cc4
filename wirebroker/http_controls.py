"""`broker.faults` and `broker.clock` of an embedded broker in a child process: the in-process calls, sent as JSON to
its HTTP port (server/web/faults_routes.py), so a test reads the same either way.

In this process `wirebroker.Broker().faults` is the broker's own FaultInjector (server/faults.py) and `.clock` its
VirtualClock (log/clock.py); this module imports neither, so process mode loads nothing of the broker.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

TIMEOUT_S = 30.0  # an advance runs what fell due before it answers: a few milliseconds, even for many groups


class ControlError(ValueError):
    """The broker refused the call (a bad fault field, an advance on the system clock); the message is its answer."""


def call(base_url: str, method: str, path: str, body: Any = None) -> Any:
    """One JSON call to the broker's HTTP port; ControlError carrying the broker's text on a 4xx answer."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base_url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        if 400 <= exc.code < 500:
            raise ControlError(exc.read().decode(errors="replace").strip()) from None
        raise


class HttpFaults:
    """FaultInjector's calls (inject, rules, clear) on a broker's HTTP port."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def inject(self, **fields: Any) -> dict[str, Any]:
        return call(self.base_url, "POST", "/faults", fields)

    def rules(self) -> list[dict[str, Any]]:
        return call(self.base_url, "GET", "/faults")

    def clear(self) -> int:
        return call(self.base_url, "DELETE", "/faults")["cleared"]


class HttpClock:
    """VirtualClock's calls (advance, time_ms, advanced_ms) on a broker's HTTP port."""

    virtual = True

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def advance(self, ms: int) -> int:
        return call(self.base_url, "POST", "/clock/advance", {"ms": ms})["advanced_ms"]

    def time_ms(self) -> int:
        return call(self.base_url, "GET", "/clock")["time_ms"]

    @property
    def advanced_ms(self) -> int:
        return call(self.base_url, "GET", "/clock")["advanced_ms"]
