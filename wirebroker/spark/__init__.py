"""PySpark reads of wirebroker's log: `from wirebroker.spark import WirebrokerDataSource` (datasource.py).

The data source needs pyspark 4.2 and pyarrow (`pip install 'wirebroker[spark]'`); log_view.py and options.py do not,
so the package imports them lazily. The broker never imports this package.
"""

from __future__ import annotations

__all__ = ["WirebrokerDataSource"]


def __getattr__(name: str) -> object:
    if name != "WirebrokerDataSource":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        from wirebroker.spark.datasource import WirebrokerDataSource
    except ImportError as exc:
        raise ImportError(f"wirebroker.spark needs pyspark 4.2 and pyarrow: pip install 'wirebroker[spark]' "
                          f"({exc})") from exc
    return WirebrokerDataSource
