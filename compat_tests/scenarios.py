"""The scenarios of the matrix: their names, in report order, and what each one checks.

Every driver implements the scenarios its client can express, with the same data and the same checks, so that a
cell means the same thing in every row. Each scenario creates its own topics named `<prefix>.<scenario>...`, so
cells never share state. A scenario that fails on Apache Kafka is a wrong scenario.
"""
from __future__ import annotations

SCENARIOS: dict[str, str] = {
    "metadata": "create a 3-partition topic; Metadata lists exactly one broker at the bootstrap address and the "
                "topic with a leader for each of its 3 partitions; the client that lists them (client id "
                "<prefix>.metadata) uses the same API versions as against Apache Kafka 4.3.1 (both brokers' request "
                "logs, negotiated.py)",
    "roundtrip": "10 records with keys, every third value null, two headers (one empty); consumed back from "
                 "offset 0 with keys, null values, headers and offsets 0..9 intact",
    "compression_gzip": "200 compressible records produced with gzip, consumed back in order and intact",
    "compression_snappy": "200 compressible records produced with snappy, consumed back in order and intact",
    "compression_lz4": "200 compressible records produced with lz4, consumed back in order and intact",
    "compression_zstd": "200 compressible records produced with zstd, consumed back in order and intact",
    "large_records": "3 records of 1,000,000 random bytes each, consumed back byte for byte",
    "seek": "10 records with timestamps 1 s apart; seek to beginning reads offset 0, seek to timestamp t0+4.5 s "
            "reads offset 5, seek to end then reads only the record produced after it (offset 10)",
    "idempotent": "an idempotent producer (acks=all) sends 500 records; exactly those 500 come back, in order",
    "consumer_group": "consumer A joins a group on a 4-partition topic and gets all 4; B joins, the group "
                      "rebalances to 2+2; all 40 records are consumed and the committed offsets are 10 on each "
                      "partition",
    "admin": "create a 3-partition topic with retention.ms=3600000; creating it again fails with "
             "TOPIC_ALREADY_EXISTS; describe shows 3 partitions; describe configs shows retention.ms=3600000 and "
             "cleanup.policy=delete; delete it and it disappears from the topic list",
    "transactions": "a transactional producer commits one record and aborts another; a second producer with the "
                    "same transactional.id fences the first in the middle of a transaction (its commit fails) and "
                    "commits its own; a read_committed consumer reads exactly the two committed records",
    "compacted": "a topic with cleanup.policy=compact, segment.ms=100, min.cleanable.dirty.ratio=0.01 and "
                 "delete.retention.ms=1000; 20 keys written 5 times each, then 5 of them deleted (tombstones); a "
                 "filler record every 0.5 s rolls a segment until the log read from offset 0 holds only the latest "
                 "value of each of the 15 live keys and nothing of the deleted ones (within 120 s: two cleanings, "
                 "each after up to log.cleaner.backoff.ms, 15 s by default)",
    "sasl_scram": "over a SASL_PLAINTEXT listener with SCRAM-SHA-512 (user created with AlterUserScramCredentials): "
                  "10 records produced and consumed back intact (security_listeners.py)",
    "tls": "over an SSL listener (the broker's certificate checked against the run's CA, host name included): "
           "10 records produced and consumed back intact",
    "share_group": "a share group (KIP-932) of two members on a 2-partition topic, share.auto.offset.reset=earliest "
                   "set as a group config: 200 records; each member releases the first delivery of every tenth value "
                   "and rejects value 7, and accepts everything else; every value but 7 is accepted exactly once, "
                   "the 20 released ones on a later delivery, and 7 is delivered once, never again",
    "spark_stream": "Spark Structured Streaming reads 100,000 records from a topic, writes upper(value) to another "
                    "topic (idempotent sink); the output holds each of them exactly once",
    "spark_batch": "a Spark batch read with startingOffsets/endingOffsets per partition returns exactly that range",
    "failover": "three brokers, a 3-partition topic with replication factor 3 and min.insync.replicas=2; an "
                "idempotent acks=all producer sends 150 of 300 records (partition = i mod 3), the leader of "
                "partition 0 is killed (kill -9), it sends the other 150; read back with assign() from the beginning, "
                "every record is there exactly once, in order on each partition",
}
# Scenarios that run on the three-broker clusters only (and no others run there).
CLUSTER_SCENARIOS = ("failover",)
FAILOVER_COUNT = 300
FAILOVER_PARTITIONS = 3

COMPRESSION_CODECS = ("gzip", "snappy", "lz4", "zstd")


def names() -> list[str]:
    return list(SCENARIOS)
