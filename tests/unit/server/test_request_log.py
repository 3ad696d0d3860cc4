"""The request log's lines (server/request_log.py), the CLI switch that turns it on, and the matrix's reading of
them beside Apache Kafka's request log (compat_tests/negotiated.py)."""

from __future__ import annotations

import json
import logging

import pytest

from compat_tests import negotiated
from compat_tests.results import Cell
from wirebroker import cli
from wirebroker.network.request_channel import Request
from wirebroker.protocol.headers import RequestHeader
from wirebroker.server import request_log

METADATA, API_VERSIONS, CREATE_TOPICS = 3, 18, 19


def logged_lines(caplog, *requests: tuple[int, int, str | None]) -> list[str]:
    with caplog.at_level(logging.DEBUG, logger=request_log.LOGGER_NAME):
        for correlation_id, (api_key, version, client_id) in enumerate(requests):
            request = Request(processor=0, connection_id="c", client_address="127.0.0.1:40318",
                              frame=memoryview(b""), received_ns=0, listener="PLAINTEXT")
            request_log.log_completed(request, RequestHeader(api_key, version, correlation_id, client_id, 2))
    return [record.getMessage() for record in caplog.records]


def kafka_line(api_key: int, version: int, client_id: str, listener: str = "PLAINTEXT") -> str:
    # The shape of a kafka.request.logger line of Apache Kafka 4.3.1, its request and response bodies cut down.
    entry = {"isForwarded": False, "requestHeader": {"requestApiKey": api_key, "requestApiVersion": version,
                                                     "correlationId": 1, "clientId": client_id},
             "request": {}, "response": {"errorCode": 0}, "connection": "127.0.0.1:9092-127.0.0.1:5000-0-0",
             "securityProtocol": "PLAINTEXT", "principal": "User:ANONYMOUS", "listener": listener}
    return "Completed request:" + json.dumps(entry, separators=(",", ":"))


def test_each_answered_request_is_one_line_naming_api_version_client_and_peer(caplog):
    lines = logged_lines(caplog, (METADATA, 12, "rdkafka"))
    assert len(lines) == 1
    assert lines[0].startswith("Completed request: Metadata v12 (correlation id 0, client id 'rdkafka') from "
                               "127.0.0.1:40318 on PLAINTEXT as User:ANONYMOUS in ")


def test_the_request_log_is_off_unless_its_logger_is_at_debug(caplog):
    with caplog.at_level(logging.INFO, logger=request_log.LOGGER_NAME):
        assert not request_log.enabled()
    with caplog.at_level(logging.DEBUG, logger=request_log.LOGGER_NAME):
        assert request_log.enabled()


def test_log_level_takes_a_level_or_a_logger_and_its_level():
    assert cli.parse_args(["--log-level", "wirebroker.request=debug", "--log-level", "WARNING"]).log_level == [
        ("wirebroker.request", "DEBUG"), ("", "WARNING")]
    with pytest.raises(SystemExit):
        cli.parse_args(["--log-level", "wirebroker.request=LOUD"])


def test_the_matrix_reads_back_what_wirebroker_logged(caplog, tmp_path):
    lines = logged_lines(caplog, (API_VERSIONS, 4, "p.metadata"), (METADATA, 13, "p.metadata"),
                         (METADATA, 12, "it's \"quoted\""), (CREATE_TOPICS, 7, None))
    path = tmp_path / "broker.log"
    path.write_text("".join(f"[2026-12-07 05:27:24,679] DEBUG wirebroker.request: {line}\n" for line in lines)
                    + "[2026-12-07 05:27:25,000] INFO wirebroker: an unrelated line\n")
    assert list(negotiated.wirebroker_requests(path, {"p.metadata", "it's \"quoted\""})) == [
        ("p.metadata", API_VERSIONS, 4), ("p.metadata", METADATA, 13), ("it's \"quoted\"", METADATA, 12)]
    assert list(negotiated.wirebroker_requests(path, {"p.metadata"})) == [
        ("p.metadata", API_VERSIONS, 4), ("p.metadata", METADATA, 13)]


def test_the_matrix_reads_kafkas_request_log_without_its_controller_traffic(tmp_path):
    path = tmp_path / "requests.log"
    path.write_text("\n".join([kafka_line(API_VERSIONS, 4, "p.metadata"), kafka_line(70, 0, "p.metadata", "CONTROLLER"),
                               kafka_line(METADATA, 13, "p.metadata"), kafka_line(METADATA, 12, "p.metadata.other"),
                               "Completed request:{\"cut short p.metadata"]) + "\n")
    assert list(negotiated.kafka_requests(path, {"p.metadata"})) == [
        ("p.metadata", API_VERSIONS, 4), ("p.metadata", METADATA, 13)]


def metadata_cells() -> list[Cell]:
    return [Cell(broker, client, "metadata", True, "1 broker") for broker in ("wirebroker", "kafka")
            for client in ("confluent-kafka", "franz-go")]


def test_a_metadata_cell_turns_red_when_its_client_negotiates_other_versions_than_on_kafka():
    logs = {"kafka": [("a.metadata", METADATA, 13), ("a.metadata", API_VERSIONS, 4), ("b.metadata", METADATA, 12)],
            "wirebroker": [("a.metadata", METADATA, 12), ("a.metadata", API_VERSIONS, 4),
                           ("b.metadata", METADATA, 12), ("b.other", METADATA, 9)]}
    cells = negotiated.check_metadata_cells(metadata_cells(), logs, {"confluent-kafka": "a.metadata",
                                                                     "franz-go": "b.metadata"})
    verdicts = {(c.broker, c.client): (c.ok, c.detail) for c in cells}
    assert verdicts["wirebroker", "confluent-kafka"] == (
        False, "1 broker; negotiated versions differ from Apache Kafka 4.3.1's: only on wirebroker: Metadata v12; "
               "only on Apache Kafka: Metadata v13")
    assert verdicts["wirebroker", "franz-go"] == (True, "1 broker; versions as on Apache Kafka 4.3.1: Metadata v12")
    assert verdicts["kafka", "confluent-kafka"] == (True, "1 broker; versions: Metadata v13, ApiVersions v4")


def test_a_metadata_cell_whose_client_never_named_itself_is_red():
    logs = {"kafka": [("a.metadata", METADATA, 13)], "wirebroker": [("rdkafka", METADATA, 13)]}
    cells = negotiated.check_metadata_cells(metadata_cells()[:1] + metadata_cells()[2:3], logs,
                                            {"confluent-kafka": "a.metadata"})
    assert [(c.broker, c.ok) for c in cells] == [("wirebroker", False), ("kafka", True)]
    assert "no request from the scenario's client id" in cells[0].detail


def test_nothing_is_compared_when_one_broker_ran_alone():
    cells = metadata_cells()
    assert negotiated.check_metadata_cells(cells, {"wirebroker": []}, {"confluent-kafka": "a.metadata"}) == cells


def test_each_client_names_its_metadata_client_after_its_prefix_but_the_tool_that_cannot():
    assert negotiated.client_id("franz-go", "c1.franz-go") == "c1.franz-go.metadata"
    assert negotiated.client_id("kafka-verifiable", "c1.kafka-verifiable") == "admin-1"
