"""wirebroker: a broker that speaks Apache Kafka's wire protocol."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wirebroker.embedded import Broker as Broker

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """`wirebroker.Broker` (embedded.py) is imported at its first use (PEP 562): `wirebroker` the command loads
    only what it runs, and the embedded broker's imports are no part of its start-up time."""
    if name == "Broker":
        from wirebroker.embedded import Broker as Broker

        return Broker
    raise AttributeError(f"module 'wirebroker' has no attribute {name!r}")
