"""The generated request and response classes of an API key (one module per API under `messages/`)."""

from __future__ import annotations

import importlib

from wirebroker.protocol.message import Message
from wirebroker.protocol.messages import API_SPECS


def request_class(api_key: int) -> type[Message]:
    spec = API_SPECS[api_key]
    return getattr(importlib.import_module(f"wirebroker.protocol.messages.{spec.module}"), spec.request)


def broker_request_class(api_key: int) -> type[Message]:
    """The class the broker reads an API's requests into for its handler: a flat reader's (codegen/flat.py: Produce
    reads into one (topic, partition, records) tuple per partition) where there is one, else the request class."""
    spec = API_SPECS[api_key]
    module = importlib.import_module(f"wirebroker.protocol.messages.{spec.module}")
    return getattr(module, spec.broker_request or spec.request)


def response_class(api_key: int) -> type[Message]:
    spec = API_SPECS[api_key]
    return getattr(importlib.import_module(f"wirebroker.protocol.messages.{spec.module}"), spec.response)
