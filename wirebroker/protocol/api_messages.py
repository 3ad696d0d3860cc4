"""The generated request and response classes of an API key (one module per API under `messages/`)."""

from __future__ import annotations

import importlib

from wirebroker.protocol.message import Message
from wirebroker.protocol.messages import API_SPECS


def request_class(api_key: int) -> type[Message]:
    spec = API_SPECS[api_key]
    return getattr(importlib.import_module(f"wirebroker.protocol.messages.{spec.module}"), spec.request)


def response_class(api_key: int) -> type[Message]:
    spec = API_SPECS[api_key]
    return getattr(importlib.import_module(f"wirebroker.protocol.messages.{spec.module}"), spec.response)
