"""A batch job over wirebroker's log with the wirebroker data source: no broker in the read path.

    python3 examples/spark/batch_report.py                                  # ./wirebroker-data, topic orders-upper
    python3 examples/spark/batch_report.py --path /var/lib/wirebroker --topic orders

It reads the topic's segment files directly (each Spark task opens its partition's files, so the path must be
readable by the executors) up to the high watermark the broker last checkpointed (every
replica.high.watermark.checkpoint.interval.ms, 5 s by default, first 30 s after the broker starts), and prints, per
partition, the records, their bytes, the offset range and the time span, then the most frequent keys.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run as a script: example_session.py beside it

from example_session import DEFAULT_LOG_DIR, spark_session
from pyspark.sql import DataFrame
from pyspark.sql import functions as F


def report(records: DataFrame) -> tuple[list, list]:
    """(per-partition summary rows, top keys rows)."""
    per_partition = (records.groupBy("partition")
                     .agg(F.count("*").alias("records"),
                          F.sum(F.coalesce(F.length("value"), F.lit(0))).alias("value_bytes"),
                          F.min("offset").alias("first_offset"), F.max("offset").alias("last_offset"),
                          F.min("timestamp").alias("first_time"), F.max("timestamp").alias("last_time"))
                     .orderBy("partition").collect())
    top_keys = (records.where(F.col("key").isNotNull()).groupBy(F.col("key").cast("string").alias("key"))
                .count().orderBy(F.desc("count"), "key").limit(5).collect())
    return per_partition, top_keys


def main(argv: list[str] | None = None) -> tuple[list, list]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", default=DEFAULT_LOG_DIR, help="the broker's log.dirs (default %(default)s)")
    parser.add_argument("--topic", default="orders-upper")
    args = parser.parse_args(argv)

    spark = spark_session("wirebroker-batch-report")
    records = (spark.read.format("wirebroker").option("path", args.path).option("subscribe", args.topic)
               .option("includeHeaders", "true").load())
    per_partition, top_keys = report(records)
    for row in per_partition:
        print(f"{args.topic}-{row.partition}: {row.records} records, {row.value_bytes} value bytes, offsets "
              f"{row.first_offset}..{row.last_offset}, {row.first_time} .. {row.last_time}")
    print("top keys:", ", ".join(f"{row.key} ({row['count']})" for row in top_keys) or "none")
    return per_partition, top_keys


if __name__ == "__main__":
    main()
