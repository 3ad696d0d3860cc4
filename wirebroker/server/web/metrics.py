"""`/metrics`: the broker's counters in Prometheus' text format, under the names Kafka's JMX exporter gives them.

Nothing on the request path calls prometheus_client: the network threads bump plain ints (per partition in the
replica manager, per API in server/web/request_metrics.py) and this collector reads them, and the gauges, when a
scraper asks.

    kafka_server_brokertopicmetrics_bytesin_total{topic}            bytes of record batches appended by producers
    kafka_server_brokertopicmetrics_messagesin_total{topic}         records appended
    kafka_server_brokertopicmetrics_bytesout_total{topic}           record bytes sent to consumers
    kafka_server_brokertopicmetrics_replicationbytesout_total{topic}  record bytes sent to followers
    kafka_network_requestmetrics_requests_total{request,version}    requests answered
    kafka_network_requestmetrics_totaltimems{request,version}       histogram: last byte read to response ready, ms
    kafka_network_requestchannel_requestqueuesize                   requests queued for the handler threads
    kafka_server_delayedoperationpurgatory_purgatorysize{delayedoperation}  Produce / Fetch requests waiting
    kafka_server_replicamanager_underreplicatedpartitions           partitions led here with a replica out of the ISR
    kafka_server_replicamanager_partitioncount / _leadercount       partitions hosted / led here
    kafka_log_log_logstartoffset / _logendoffset{topic,partition}   each hosted partition's offsets
    kafka_server_socket_server_metrics_connection_count{listener}   open client connections
    kafka_server_group_coordinator_metrics_group_count{protocol,state}  groups by protocol (classic, consumer), state
    kafka_log_logcleaner_* / kafka_log_logcleanermanager_*          the log cleaner's gauges (cleaner_metrics.py)
    process_*                                                       prometheus_client's process collector

The per-topic counters live on the partitions: a deleted topic's counts go with it, as Kafka removes its metrics.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from wirebroker.protocol.messages import API_SPECS
from wirebroker.server.web.cleaner_metrics import cleaner_gauges
from wirebroker.server.web.request_metrics import (
    FIRST_BUCKET,
    LATENCY_BUCKETS_MS,
    REQUESTS,
    TOTAL_NS,
    RequestMetrics,
)
from wirebroker.server.web.server import Handler, HttpRequest, HttpResponse

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from wirebroker.server.web.broker_view import ObservedBroker

TOPIC_COUNTERS = (  # (partition attribute, metric name, help)
    ("bytes_in", "kafka_server_brokertopicmetrics_bytesin", "Bytes of record batches appended by producers"),
    ("messages_in", "kafka_server_brokertopicmetrics_messagesin", "Records appended by producers"),
    ("bytes_out", "kafka_server_brokertopicmetrics_bytesout", "Record bytes sent to consumers"),
    ("replication_bytes_out", "kafka_server_brokertopicmetrics_replicationbytesout",
     "Record bytes sent to follower replicas"),
)


class BrokerCollector(Collector):
    def __init__(self, broker: ObservedBroker, requests: RequestMetrics) -> None:
        self.broker = broker
        self.requests = requests

    def collect(self) -> Iterator[Metric]:
        yield from self._topics()
        yield from self._requests()
        yield from self._broker_gauges()
        yield from cleaner_gauges(self.broker.log_manager.cleaner)

    def _topics(self) -> Iterator[Metric]:
        partitions = self.broker.replica_manager.all_partitions()
        for attribute, name, documentation in TOPIC_COUNTERS:
            family = CounterMetricFamily(name, documentation, labels=["topic"])
            per_topic: Counter[str] = Counter()
            for partition in partitions:
                per_topic[partition.topic] += getattr(partition, attribute)
            for topic, value in sorted(per_topic.items()):
                family.add_metric([topic], value)
            yield family
        start = GaugeMetricFamily("kafka_log_log_logstartoffset", "First offset of the partition's log",
                                  labels=["topic", "partition"])
        end = GaugeMetricFamily("kafka_log_log_logendoffset", "Offset of the partition's next record",
                                labels=["topic", "partition"])
        for partition in sorted(partitions, key=lambda p: (p.topic, p.index)):
            labels = [partition.topic, str(partition.index)]
            start.add_metric(labels, partition.log_start_offset)
            end.add_metric(labels, partition.log_end_offset)
        yield start
        yield end

    def _requests(self) -> Iterator[Metric]:
        labels = ["request", "version"]
        requests = CounterMetricFamily("kafka_network_requestmetrics_requests", "Requests answered", labels=labels)
        latency = HistogramMetricFamily("kafka_network_requestmetrics_totaltimems",
                                        "Time from a request's last byte read to its response ready, in ms",
                                        labels=labels)
        for (api_key, version), counts in sorted(self.requests.snapshot().items()):
            request_labels = [API_SPECS[api_key].name, str(version)]
            requests.add_metric(request_labels, counts[REQUESTS])
            cumulative, buckets = 0, []
            for bound, count in zip((*LATENCY_BUCKETS_MS, math.inf), counts[FIRST_BUCKET:]):
                cumulative += count
                buckets.append((floatToGoString(bound), cumulative))
            latency.add_metric(request_labels, buckets, counts[TOTAL_NS] / 1e6)
        yield requests
        yield latency

    def _broker_gauges(self) -> Iterator[Metric]:
        broker = self.broker
        manager = broker.replica_manager
        yield GaugeMetricFamily("kafka_network_requestchannel_requestqueuesize",
                                "Requests waiting for a handler thread", value=broker.channel.queue_size)
        purgatories = GaugeMetricFamily("kafka_server_delayedoperationpurgatory_purgatorysize",
                                        "Requests waiting in a purgatory", labels=["delayedoperation"])
        for purgatory in (manager.produce_purgatory, manager.fetch_purgatory):
            purgatories.add_metric([purgatory.name], purgatory.watched())
        yield purgatories
        partitions = manager.all_partitions()
        yield GaugeMetricFamily("kafka_server_replicamanager_underreplicatedpartitions",
                                "Partitions led here whose ISR lacks an assigned replica",
                                value=len(manager.under_replicated_partitions()))
        yield GaugeMetricFamily("kafka_server_replicamanager_partitioncount", "Partitions hosted here",
                                value=len(partitions))
        yield GaugeMetricFamily("kafka_server_replicamanager_leadercount", "Partitions led here",
                                value=sum(1 for p in partitions if p.is_leader))
        connections = GaugeMetricFamily("kafka_server_socket_server_metrics_connection_count",
                                        "Open client connections", labels=["listener"])
        if broker.socket_server is not None:
            for listener, count in sorted(broker.socket_server.connections_per_listener().items()):
                connections.add_metric([listener], count)
        yield connections
        groups = GaugeMetricFamily("kafka_server_group_coordinator_metrics_group_count",
                                   "Groups this coordinator owns, by protocol and state", labels=["protocol", "state"])
        _, listed = broker.group_coordinator.list_groups([], [])
        for (protocol, state), count in sorted(Counter((g.group_type, g.group_state) for g in listed).items()):
            groups.add_metric([protocol, state], count)
        yield groups


def metrics_route(broker: ObservedBroker, requests: RequestMetrics) -> Handler:
    """The /metrics handler: a registry of its own (the process's default one is left to the embedding program)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(BrokerCollector(broker, requests))
    ProcessCollector(registry=registry)

    def scrape(request: HttpRequest) -> HttpResponse:
        return HttpResponse(200, generate_latest(registry), CONTENT_TYPE_LATEST)

    return scrape
