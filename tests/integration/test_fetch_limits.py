"""A fetch's byte limits (KIP-74), as Kafka's ReplicaManager applies them: the first partition with data gets a whole
batch even past the limits, and a later partition whose first batch the remaining bytes would cut short gets no
records at all rather than a partial batch (the Java consumer fails on a partition answered with bytes but no
complete batch: "Received a non-empty fetch response from the server, but no complete records were found")."""

from __future__ import annotations

from tests.integration.raw_client import RawClient
from tests.integration.test_data_path_errors import FETCH, a_batch, create_topic, produce
from wirebroker.protocol import records
from wirebroker.protocol.errors import ErrorCode


def fetch_both(client: RawClient, topics: list[str], max_bytes: int) -> list[bytes]:
    from wirebroker.protocol.messages.fetch import FetchRequest as F

    response = client.request(FETCH, 12, replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=max_bytes, topics=[
        F.FetchTopic(topic=topic, partitions=[F.FetchPartition(partition=0, fetch_offset=0,
                                                               partition_max_bytes=1_000_000)])
        for topic in topics])
    assert all(p.error_code == ErrorCode.NONE for t in response.responses for p in t.partitions)
    return [bytes(t.partitions[0].records or b"") for t in response.responses]


def test_a_partition_the_remaining_bytes_would_cut_short_gets_no_records(broker):
    batch = a_batch(10, value_size=500)
    with RawClient(broker.bootstrap) as client:
        for topic in ("limits-first", "limits-second"):
            create_topic(client, topic)
            assert produce(client, topic, batch).error_code == ErrorCode.NONE
            assert produce(client, topic, batch).error_code == ErrorCode.NONE
        # Room for the first partition's two batches and half of the second partition's first batch.
        first, second = fetch_both(client, ["limits-first", "limits-second"], 2 * len(batch) + len(batch) // 2)
    assert len(first) == 2 * len(batch)
    assert second == b""


def test_the_first_partition_gets_a_whole_batch_past_the_limit(broker):
    batch = a_batch(10, value_size=500)
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "limits-only")
        assert produce(client, "limits-only", batch).error_code == ErrorCode.NONE
        (data,) = fetch_both(client, ["limits-only"], len(batch) // 3)
    assert len(data) == len(batch) and records.read_header(data).base_offset == 0
