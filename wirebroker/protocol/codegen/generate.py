"""From schemas to module texts: pairs each request with its response and renders every module in memory."""

from __future__ import annotations

import json
from pathlib import Path

from wirebroker.protocol.codegen.render import (
    module_name,
    render_module,
    render_registry,
)
from wirebroker.protocol.codegen.schema import Message, load_all


def generate(schemas: Path) -> dict[str, str]:
    """File name -> generated text, for every message under `schemas`."""
    messages = load_all(schemas)
    by_name = {m.name: m for m in messages}
    apis: list[tuple[Message, Message]] = []
    others: list[Message] = []
    for m in messages:
        if m.kind == "request":
            apis.append((m, by_name[m.name[: -len("Request")] + "Response"]))
        elif m.kind not in ("request", "response"):
            others.append(m)
    apis.sort(key=lambda pair: pair[0].api_key)
    files = {f"{module_name(req)}.py": render_module([req, resp]) for req, resp in apis}
    files.update({f"{module_name(m)}.py": render_module([m]) for m in others})
    manifest = json.loads((schemas / "manifest.json").read_text())
    kafka = json.loads((schemas / "kafka-advertised.json").read_text())
    kafka_version = json.loads((schemas / "SOURCE.json").read_text())["version"]
    files["__init__.py"] = render_registry(apis, others, manifest, (kafka_version, kafka))
    return files
