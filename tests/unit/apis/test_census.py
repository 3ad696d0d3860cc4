"""The API census (docs/api-census.md) is what the registry and Kafka's advertised set make now, with a reason for
every difference."""

import pytest

from wirebroker.apis.census import GAP_REASONS, MissingReasonError, main, render
from wirebroker.apis.registry import supported_versions
from wirebroker.protocol.messages import KAFKA_ADVERTISED_VERSIONS


def test_census_doc_is_current(capsys):
    assert main(["--check"]) == 0, capsys.readouterr().err


def test_every_gap_has_a_reason_and_matching_keys_have_none():
    text = render(supported_versions(), KAFKA_ADVERTISED_VERSIONS)
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == len(set(supported_versions()) | set(KAFKA_ADVERTISED_VERSIONS))
    for key, name, kafka, ours, reason in rows:
        assert (reason.strip(" |") == "") == (kafka == ours), (key, name)


def test_a_gap_without_a_reason_fails_the_census():
    ours = dict(KAFKA_ADVERTISED_VERSIONS)
    ours[12] = (0, 3)  # Heartbeat one version short: no reason given for it
    assert "Heartbeat" not in GAP_REASONS
    with pytest.raises(MissingReasonError, match="Heartbeat"):
        render(ours, KAFKA_ADVERTISED_VERSIONS)
