"""The registry serves every client API from the start and imports its module at its first request.

Each check runs in a fresh interpreter: the registry is process-wide, and other tests import API modules.
"""

from __future__ import annotations

import json
import subprocess
import sys

REGISTERED = ("import json, wirebroker.apis; "
              "from wirebroker.apis.registry import SERVED; "
              "print(json.dumps({k: [a.min_version, a.max_version, a.advertised, a.handle.__module__] "
              "for k, a in SERVED.items()}))")


def _run(code: str) -> dict:
    probe = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(probe.stdout)


def test_each_api_module_serves_the_versions_it_was_registered_at_before_it_loaded():
    before = _run(REGISTERED)
    after = _run("import importlib; from wirebroker.apis import CLIENT_API_MODULES; "
                 "[importlib.import_module(f'wirebroker.apis.{m}') for m in CLIENT_API_MODULES]; " + REGISTERED)
    assert {key: api[:3] for key, api in after.items()} == {key: api[:3] for key, api in before.items()}
    # every module took its key over: no handler is the registry's stand-in any more
    assert [key for key, api in after.items() if api[3] == "wirebroker.apis.registry"] == []


def test_a_module_narrowing_the_versions_clients_were_told_is_refused():
    refused = _run("import json, wirebroker.apis; from wirebroker.apis.registry import serve\n"
                   "try:\n    serve(35, lambda ctx, request: None, max_version=2)\n"
                   "except ValueError as exc:\n    print(json.dumps({'refused': str(exc)}))\n"
                   "else:\n    print(json.dumps({}))")
    assert "narrow its versions in the manifest" in refused.get("refused", "")
