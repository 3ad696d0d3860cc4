"""A SparkSession for wirebroker.spark's tests and benchmark, with pyspark installed as the compat harness installs it.

pyspark 4.2 is heavy (a ~456 MB sdist) and optional, so it is never a test dependency of the package: the compat
harness's spark_env() installs it into the cached venv (.cache/compat/venv, pip's cache beside it) with the Kafka
connector jars, and this adds the rest of the `spark` extra (pyarrow) plus wirebroker's own dependencies there. The
test process imports pyspark from that venv; Spark's Python workers run the venv's interpreter with the repo on
PYTHONPATH, so they import this checkout's wirebroker.spark. A failed install raises SparkUnavailable saying what to
install (the tests turn it into a failure with that message).
"""

from __future__ import annotations

import glob
import os
import site
import sys
import tomllib
from pathlib import Path

from compat_tests.cache import (
    REPO_DIR,
    InstallError,
    inputs_digest,
    is_fresh,
    mark_fresh,
    run_install_step,
)
from compat_tests.installers import spark_env

PYPROJECT = REPO_DIR / "pyproject.toml"
STAMP = ".stamp-spark-extra"
WHAT_TO_INSTALL = ("pyspark 4.2.0 and pyarrow are needed in .cache/compat/venv, which this installs on first use "
                   "(compat_tests/installers.py spark_env() and pyproject's `spark` extra; `python3 -m compat_tests "
                   "--clients spark` installs pyspark the same way): it needs python3-venv, network access to PyPI and Maven "
                   "Central, Maven and a JDK 17. What failed:")


class SparkUnavailable(RuntimeError):
    """pyspark (or pyarrow, or the connector jars) could not be installed or imported."""


def spark_python_and_jars() -> tuple[Path, Path]:
    """The venv interpreter that has pyspark, pyarrow and wirebroker's dependencies, and the connector jars dir."""
    try:
        python, jars = spark_env()
        venv = python.parent.parent
        digest = inputs_digest([PYPROJECT])
        if not is_fresh(venv, digest, STAMP):
            project = tomllib.loads(PYPROJECT.read_text())["project"]
            requirements = project["dependencies"] + project["optional-dependencies"]["spark"]
            run_install_step([python, "-m", "pip", "install", "-q", *requirements],
                             env={"PIP_CACHE_DIR": str(venv.parent / "pip")}, hint="install python3-venv and pip")
            mark_fresh(venv, digest, STAMP)
    except InstallError as exc:
        raise SparkUnavailable(f"{WHAT_TO_INSTALL}\n{exc}") from exc
    return python, jars


def worker_environment(python: Path) -> dict[str, str]:
    """What a process running Spark needs to find the venv's pyspark and this checkout's wirebroker."""
    return {"PYSPARK_PYTHON": str(python), "PYSPARK_DRIVER_PYTHON": str(python),
            "PYTHONPATH": os.pathsep.join([str(REPO_DIR), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


def start_session(app_name: str):
    """A local[2] SparkSession with the Kafka connector and the wirebroker data source registered."""
    python, jars = spark_python_and_jars()
    venv_site = glob.glob(str(python.parent.parent / "lib" / "python*" / "site-packages"))
    for path in venv_site:
        site.addsitedir(path)
    os.environ.update(worker_environment(python))
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        raise SparkUnavailable(f"{WHAT_TO_INSTALL}\n{exc}") from exc
    from wirebroker.spark import WirebrokerDataSource

    session = (SparkSession.builder.master("local[2]").appName(app_name)
               .config("spark.jars", ",".join(sorted(glob.glob(str(jars / "*.jar")))))
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.driver.memory", "1g")
               .getOrCreate())
    session.sparkContext.setLogLevel("WARN")
    session.dataSource.register(WirebrokerDataSource)
    assert sys.modules["pyspark"].__version__.startswith("4.2")
    return session
