"""The Spark driver of the matrix: pyspark with spark-sql-kafka-0-10 (jars from $SPARK_KAFKA_JARS, no network).

One local Spark session runs both scenarios. Spark can neither create topics nor pick partition counts, so its
topics are auto-created by the broker on the Metadata request of Spark's own producer (num.partitions of the
broker; the matrix starts both brokers with 4) when a batch write fills the input.
  spark_stream  100,000 records batch-written to a topic; a Structured Streaming query (trigger availableNow)
                writes upper(value) to another topic through an idempotent producer (acks=all); a batch read of the
                output must hold each of the 100,000 exactly once.
  spark_batch   40 records written 10 to each partition; a batch read with per-partition startingOffsets and
                endingOffsets (numbers, -2 earliest, -1 latest) returns exactly those offset ranges.
"""
from __future__ import annotations

import glob
import json
import os
import tempfile

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import driver_common as dc
from driver_common import expect

STREAM_RECORDS = 100_000
BATCH_PARTITIONS = 4
BATCH_RECORDS_PER_PARTITION = 10
# (starting, ending) offsets per partition for the batch read: -2 is earliest, -1 latest; ending is exclusive.
BATCH_RANGES = {0: (2, 7), 1: (-2, 3), 2: (5, -1), 3: (-2, -1)}

_session: SparkSession | None = None


def spark() -> SparkSession:
    global _session
    if _session is None:
        jars = ",".join(sorted(glob.glob(os.path.join(os.environ["SPARK_KAFKA_JARS"], "*.jar"))))
        _session = (SparkSession.builder.master("local[2]").appName("wirebroker-compat")
                    .config("spark.jars", jars)
                    .config("spark.ui.enabled", "false")
                    .config("spark.ui.showConsoleProgress", "false")
                    .config("spark.sql.shuffle.partitions", "2")
                    .config("spark.driver.memory", "1g")
                    .getOrCreate())
        _session.sparkContext.setLogLevel("WARN")
    return _session


def kafka_options(security: dict[str, str] | None) -> dict[str, str]:
    """A secured listener's Java client settings (driver_common.java_security_settings) as kafka.* options."""
    return {f"kafka.{key}": value for key, value in (security or {}).items()}


def write_batch(bootstrap: str, topic: str, frame, security: dict[str, str] | None = None) -> None:
    (frame.write.format("kafka").option("kafka.bootstrap.servers", bootstrap).options(**kafka_options(security))
     .option("topic", topic).save())


def read_batch(bootstrap: str, topic: str, starting: str = "earliest", ending: str = "latest",
               security: dict[str, str] | None = None):
    return (spark().read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
            .options(**kafka_options(security)).option("subscribe", topic)
            .option("startingOffsets", starting).option("endingOffsets", ending).load())


def spark_stream(bootstrap: str, prefix: str) -> str:
    source, sink = dc.topic_name(prefix, "spark_stream", "in"), dc.topic_name(prefix, "spark_stream", "out")
    session = spark()  # column expressions need the session's context
    ids = F.col("id").cast("string")
    records = session.range(STREAM_RECORDS).select(ids.alias("key"), F.concat(F.lit("record-"), ids).alias("value"))
    write_batch(bootstrap, source, records)
    checkpoint = tempfile.mkdtemp(prefix="compat-spark-checkpoint-")
    query = (spark().readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
             .option("subscribe", source).option("startingOffsets", "earliest").load()
             .select(F.col("key"), F.upper(F.col("value").cast("string")).alias("value"))
             .writeStream.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("topic", sink)
             .option("kafka.enable.idempotence", "true").option("kafka.acks", "all")
             .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
    query.awaitTermination(timeout=600)
    expect(query.exception() is None, f"streaming query failed: {query.exception()}")
    out = read_batch(bootstrap, sink).select(F.col("value").cast("string").alias("value"))
    stats = out.agg(F.count("*").alias("rows"), F.countDistinct("value").alias("distinct"),
                    F.sum(F.when(F.col("value").rlike(r"^RECORD-[0-9]+$")
                                 & (F.regexp_extract("value", r"[0-9]+", 0).cast("long") < STREAM_RECORDS), 1)
                          .otherwise(0)).alias("wellformed")).collect()[0]
    expect(stats["rows"] == STREAM_RECORDS and stats["distinct"] == STREAM_RECORDS
           and stats["wellformed"] == STREAM_RECORDS,
           f"output holds {stats['rows']} rows, {stats['distinct']} distinct, {stats['wellformed']} well-formed; "
           f"expected {STREAM_RECORDS} of each")
    return f"{STREAM_RECORDS} records streamed {source} -> upper(value) -> {sink}: none lost, none duplicated"


def spark_batch(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "spark_batch")
    rows = [(p, f"{p}-{i}") for p in range(BATCH_PARTITIONS) for i in range(BATCH_RECORDS_PER_PARTITION)]
    write_batch(bootstrap, topic, spark().createDataFrame(rows, "partition INT, value STRING"))
    starting = json.dumps({topic: {str(p): start for p, (start, _) in BATCH_RANGES.items()}})
    ending = json.dumps({topic: {str(p): end for p, (_, end) in BATCH_RANGES.items()}})
    select = ("partition", "offset", F.col("value").cast("string").alias("value"))
    everything = {(r["partition"], r["offset"]): r["value"]
                  for r in read_batch(bootstrap, topic).select(*select).collect()}
    expect(len(everything) == len(rows), f"the topic holds {len(everything)} records, expected {len(rows)}")
    got = sorted((r["partition"], r["offset"], r["value"])
                 for r in read_batch(bootstrap, topic, starting, ending).select(*select).collect())
    expected = []
    for p, (start, end) in BATCH_RANGES.items():
        first = 0 if start == -2 else start
        last = BATCH_RECORDS_PER_PARTITION if end == -1 else end
        expected += [(p, o, everything[(p, o)]) for o in range(first, last)]
    expect(got == sorted(expected), f"batch read returned {len(got)} rows, expected {len(expected)}: {got[:5]}...")
    return f"startingOffsets/endingOffsets {BATCH_RANGES} returned exactly {len(expected)} records"


def secured(scenario: str):
    """The sasl_scram and tls cells: 10 records batch-written to partition 0 and batch-read back, both through the
    secured listener (its settings as kafka.* options of the sink and the source)."""
    def run(bootstrap: str, prefix: str) -> str:
        security = dc.java_security_settings(scenario)
        topic = dc.topic_name(prefix, scenario)
        expected = dc.secured_values()
        # One input partition: one write task, so the records reach Kafka's partition 0 in order.
        frame = spark().createDataFrame([(0, v) for v in expected], "partition INT, value BINARY").coalesce(1)
        write_batch(security["bootstrap.servers"], topic, frame, security)
        rows = read_batch(security["bootstrap.servers"], topic, security=security).orderBy("offset").collect()
        return dc.check_values([bytes(r["value"]) for r in rows], expected,
                               f"{scenario} ({security['security.protocol']})")
    return run


dc.run({"spark_stream": spark_stream, "spark_batch": spark_batch, "sasl_scram": secured("sasl_scram"),
        "tls": secured("tls")})
