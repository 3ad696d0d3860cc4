"""The SparkSession the examples share: Spark's Kafka connector, and the wirebroker data source registered.

The connector comes from Maven through `spark.jars.packages` (org.apache.spark:spark-sql-kafka-0-10_2.13, the version
of your Spark), or from a folder of jars named by $SPARK_KAFKA_JARS when there is no network (the tests use the
compat harness's cached jars: .cache/compat/jars/spark).
"""

from __future__ import annotations

import glob
import os

from pyspark.sql import SparkSession

from wirebroker.spark import WirebrokerDataSource

KAFKA_CONNECTOR = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0"
DEFAULT_BOOTSTRAP = os.environ.get("WIREBROKER_BOOTSTRAP", "localhost:9092")  # `make run`'s broker
DEFAULT_LOG_DIR = os.environ.get("WIREBROKER_LOG_DIR", "./wirebroker-data")  # `make run`'s log.dirs


def spark_session(app_name: str) -> SparkSession:
    """A local session (or the one already running in this process)."""
    builder = SparkSession.builder.appName(app_name).config("spark.sql.session.timeZone", "UTC")
    if not os.environ.get("SPARK_MASTER"):
        builder = builder.master("local[*]")
    jars_dir = os.environ.get("SPARK_KAFKA_JARS")
    if jars_dir:
        builder = builder.config("spark.jars", ",".join(sorted(glob.glob(os.path.join(jars_dir, "*.jar")))))
    else:
        builder = builder.config("spark.jars.packages", KAFKA_CONNECTOR)
    session = builder.getOrCreate()
    session.dataSource.register(WirebrokerDataSource)
    return session
