"""CRC32C (Castagnoli), the checksum of RecordBatch v2 and of Kafka's snapshot files.

`checksum.crc32c(data, value=0)` is the `crc32c` package's C function, imported on first use: importing that
package costs about 15 ms (its __init__ reads its own version through importlib.metadata and loads its command-line
tool), a sixth of a single node's start-up, and a broker needs no checksum before its first batch or snapshot.
Callers use the module attribute; from the first use on it is the C function itself, with no wrapper in between.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def __getattr__(name: str) -> Callable[..., int] | Any:  # PEP 562: called only while `crc32c` is not loaded yet
    if name != "crc32c":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    function = importlib.import_module("crc32c").crc32c
    globals()["crc32c"] = function
    return function
