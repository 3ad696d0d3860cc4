"""The HTTP port's status page in a real headless Chromium (Debian's, installed by `make tools`): it loads with no
console error and shows the topics a real client made and the group reading them."""

from __future__ import annotations

import os
import time

import pytest

from wirebroker.network.ports import free_port

CHROMIUM = "/usr/bin/chromium"
# The flags this machine's notes give for a headless Chromium without a desktop session or network services.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TOPICS = ("page-orders", "page-payments")


def test_the_status_page_shows_the_topics_and_groups_without_console_errors(broker_factory, tmp_path):
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (`make tools`, or apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is missing: pip install -e '.[test]' (never `playwright install`: it drives "
                    f"{CHROMIUM})")
    from kafka import KafkaConsumer, KafkaProducer

    url = f"http://127.0.0.1:{free_port()}"
    broker = broker_factory(**{"http.listener": url, "offsets.topic.num.partitions": "1",
                               "offsets.topic.replication.factor": "1"})
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    for topic in TOPICS:
        producer.send(topic, b"<b>not markup</b>").get(timeout=30)
    producer.close()
    consumer = KafkaConsumer(TOPICS[0], bootstrap_servers=broker.bootstrap, group_id="page-readers")
    deadline = time.monotonic() + 30
    while not consumer.assignment() and time.monotonic() < deadline:
        consumer.poll(timeout_ms=200)

    problems: list[str] = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            try:
                page = browser.new_context().new_page()
                page.on("console", lambda message: message.type == "error" and problems.append(message.text))
                page.on("pageerror", lambda error: problems.append(str(error)))
                page.goto(url + "/", wait_until="load")
                page.wait_for_selector("body[data-loaded='true']", timeout=15_000)
                page.wait_for_selector("#groups tr[data-group='page-readers']", timeout=15_000)
                shown = page.eval_on_selector_all("#topics tr[data-topic]", "rows => rows.map(r => r.dataset.topic)")
                group_row = page.inner_text("#groups tr[data-group='page-readers']")
                status = page.inner_text("#status")
            finally:
                browser.close()
    finally:
        consumer.close()
    assert problems == []
    assert sorted(set(shown)) == sorted(TOPICS)  # internal topics hidden unless ?internal
    assert "Stable" in group_row and f"{TOPICS[0]} [0]" in group_row
    assert status.startswith("updated ")
