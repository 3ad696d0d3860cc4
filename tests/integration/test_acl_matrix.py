"""The ACL matrix on wirebroker, held to Apache Kafka 4.3.1's recorded answers (compat_tests/acl_matrix.py says
what it covers; `python -m compat_tests.acl_matrix` runs it against both brokers and re-records Kafka's answers)."""

from __future__ import annotations

import json

from compat_tests.acl_matrix import KAFKA_ANSWERS, answer_count, answers_of, differences


def test_wirebroker_answers_the_acl_matrix_as_kafka_4_3_1_does(tmp_path):
    kafka = json.loads(KAFKA_ANSWERS.read_text())
    ours = answers_of("wirebroker", tmp_path)
    assert differences(ours, kafka) == []
    assert answer_count(kafka) >= 200  # both principals, every probe
