"""A Structured Streaming pipeline: orders from one topic, transformed, written to another with the Kafka sink.

    python3 examples/spark/stream_upper.py                       # runs until stopped (Ctrl-C)
    python3 examples/spark/stream_upper.py --available-now       # processes what is there, then exits

It reads `--source` through Spark's Kafka source, keeps the key, upper-cases the value and adds the source offset as
a header, and writes to `--sink` through the Kafka sink with an idempotent producer and acks=all: the broker drops a
retried batch, so a restarted task does not duplicate what it had written. (Spark's Kafka sink is at-least-once
across a failed micro-batch: it has no transactional mode.) The offsets read live in `--checkpoint`, so a restarted
job continues where it stopped.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run as a script: example_session.py beside it

from example_session import DEFAULT_BOOTSTRAP, spark_session
from pyspark.sql import DataFrame
from pyspark.sql import functions as F


def transform(orders: DataFrame) -> DataFrame:
    """The pipeline's logic: what a user replaces with their own."""
    return orders.select(
        F.col("key"),
        F.upper(F.col("value").cast("string")).alias("value"),
        F.array(F.struct(F.lit("source-offset").alias("key"),
                         F.col("offset").cast("string").cast("binary").alias("value"))).alias("headers"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default=DEFAULT_BOOTSTRAP, help="the broker (default %(default)s)")
    parser.add_argument("--source", default="orders")
    parser.add_argument("--sink", default="orders-upper")
    parser.add_argument("--checkpoint", default="./spark-checkpoints/stream_upper")
    parser.add_argument("--available-now", action="store_true", help="process what is there, then exit")
    args = parser.parse_args(argv)

    spark = spark_session("wirebroker-stream-upper")
    orders = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", args.bootstrap)
              .option("subscribe", args.source).option("startingOffsets", "earliest").load())
    writer = (transform(orders).writeStream.format("kafka")
              .option("kafka.bootstrap.servers", args.bootstrap).option("topic", args.sink)
              .option("kafka.enable.idempotence", "true").option("kafka.acks", "all")
              .option("checkpointLocation", args.checkpoint))
    if args.available_now:
        writer = writer.trigger(availableNow=True)
    query = writer.start()
    query.awaitTermination()


if __name__ == "__main__":
    main()
