"""Write a MatrixResult as compat_tests/report/matrix.md, matrix.json and matrix.html.

The grid is client × scenario; each cell shows wirebroker beside Apache Kafka (green pass, red fail, blank where
the client cannot express the scenario or the broker was not run). In the HTML the failure text is the hover title
of a red cell; in Markdown failures are listed under the grid.
"""
from __future__ import annotations

import html
import json
from pathlib import Path

from compat_tests.cache import PACKAGE_DIR
from compat_tests.results import Cell, MatrixResult
from compat_tests.scenarios import SCENARIOS

REPORT_DIR = PACKAGE_DIR / "report"
BROKER_LABELS = {"wirebroker": "wirebroker", "kafka": "Apache Kafka",
                 "wirebroker-3": "wirebroker ×3", "kafka-3": "Apache Kafka ×3"}
# Short marks of the HTML cells: the three-broker clusters are W3/K3.
HTML_LABELS = {"wirebroker": "W", "kafka": "K", "wirebroker-3": "W3", "kafka-3": "K3"}
MARK = {True: "✅", False: "❌", None: "·"}


def write_all(result: MatrixResult, out_dir: Path = REPORT_DIR) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / "matrix.md", out_dir / "matrix.json", out_dir / "matrix.html"]
    paths[0].write_text(markdown(result))
    paths[1].write_text(json.dumps(result.to_json(), indent=1) + "\n")
    paths[2].write_text(html_page(result))
    return paths


def _brokers(result: MatrixResult) -> list[str]:
    return [b for b in BROKER_LABELS if b in result.brokers]


def _scenario_brokers(result: MatrixResult, scenario: str) -> list[str]:
    """The brokers a scenario's column shows: those that ran it (one broker, or the three-broker clusters)."""
    ran = {c.broker for c in result.cells if c.scenario == scenario}
    return [b for b in _brokers(result) if b in ran] or _brokers(result)


def _state(result: MatrixResult, broker: str, client: str, scenario: str) -> bool | None:
    cell = result.cell(broker, client, scenario)
    return None if cell is None else cell.ok


def summary_lines(result: MatrixResult) -> list[str]:
    lines = []
    for broker in _brokers(result):
        cells = [c for c in result.cells if c.broker == broker]
        passed = sum(c.ok for c in cells)
        name = result.brokers[broker]["name"]
        label = BROKER_LABELS[broker] if name == BROKER_LABELS[broker] else f"{BROKER_LABELS[broker]} ({name})"
        lines.append(f"{label}: {passed}/{len(cells)} cells green")
    for suite in result.suites:
        lines.append(f"kafka-python's integration tests on {BROKER_LABELS.get(suite.broker, suite.broker)}: "
                     f"{suite.passed} passed, {suite.failed} failed, {suite.errors} errors, {suite.skipped} skipped"
                     f" ({suite.note})")
    lines.append("timings: " + ", ".join(f"{k} {v}" for k, v in result.timings.items()))
    return lines


def markdown(result: MatrixResult) -> str:
    columns: dict[str, list[str]] = {}  # "wirebroker / Apache Kafka" -> the scenarios whose cells show those
    for scenario in result.scenarios:
        order = " / ".join(BROKER_LABELS[b] for b in _scenario_brokers(result, scenario))
        columns.setdefault(order, []).append(scenario)
    main, *others = sorted(columns, key=lambda order: -len(columns[order])) or [""]
    exceptions = "".join(f"; in {', '.join(columns[o])}: {o}" for o in others)
    out = ["# Compatibility matrix", "",
           f"Run {result.started_at}. Each cell: {main}{exceptions} (✅ pass, ❌ fail, · not expressible by the "
           f"client).", ""]
    out += [f"- {line}" for line in summary_lines(result)] + [""]
    out.append("| client | " + " | ".join(result.scenarios) + " |")
    out.append("|---" * (len(result.scenarios) + 1) + "|")
    for client in result.clients:
        row = [" ".join(MARK[_state(result, b, client, s)] for b in _scenario_brokers(result, s))
               for s in result.scenarios]
        out.append(f"| {client} | " + " | ".join(row) + " |")
    out += ["", "## Scenarios", ""] + [f"- **{s}**: {SCENARIOS[s]}" for s in result.scenarios]
    failures = [c for c in result.cells if not c.ok]
    if failures:
        out += ["", "## Failures", ""]
        out += [f"- {BROKER_LABELS[c.broker]} · {c.client} · {c.scenario}: {_one_line(c.detail)}" for c in failures]
    for suite in result.suites:
        if suite.failures:
            out += ["", f"## kafka-python's integration tests: failures on {BROKER_LABELS.get(suite.broker)}", ""]
            out += [f"- `{test}`: {_one_line(message)}" for test, message in suite.failures]
    return "\n".join(out) + "\n"


def _one_line(text: str, limit: int = 400) -> str:
    flat = " ".join(text.split()).replace("|", "\\|")
    return flat if len(flat) <= limit else flat[:limit] + "…"


STYLE = """
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 3px 5px; text-align: center; font-size: 13px; }
th.client { text-align: left; }
span.cell { display: inline-block; width: 2.6em; padding: 2px 0; margin: 1px; border-radius: 3px; color: #fff; }
span.pass { background: #2e8b3a; } span.fail { background: #c62828; cursor: help; } span.none { background: #ddd; }
"""


def _html_cell(cell: Cell | None, broker: str) -> str:
    label = HTML_LABELS[broker]
    if cell is None:
        return f'<span class="cell none" title="{BROKER_LABELS[broker]}: not run">{label}</span>'
    css = "pass" if cell.ok else "fail"
    title = html.escape(f"{BROKER_LABELS[broker]} · {cell.client} · {cell.scenario} ({cell.seconds:.1f}s): "
                        f"{cell.detail}", quote=True)
    return f'<span class="cell {css}" title="{title}">{label}</span>'


def html_page(result: MatrixResult) -> str:
    head = "".join(f'<th title="{html.escape(SCENARIOS[s], quote=True)}">{html.escape(s)}</th>'
                   for s in result.scenarios)
    rows = []
    for client in result.clients:
        cells = []
        for scenario in result.scenarios:
            brokers = _scenario_brokers(result, scenario)
            parts = [result.cell(b, client, scenario) for b in brokers]
            if all(p is None for p in parts):
                cells.append("<td></td>")
            else:
                cells.append("<td>" + "".join(_html_cell(p, b) for p, b in zip(parts, brokers, strict=True)) + "</td>")
        rows.append(f'<tr><th class="client">{html.escape(client)}</th>{"".join(cells)}</tr>')
    summary = "".join(f"<li>{html.escape(line)}</li>" for line in summary_lines(result))
    suites = "".join(_suite_html(s) for s in result.suites)
    legend = " beside ".join(f"{HTML_LABELS[b]} = {BROKER_LABELS[b]}" for b in _brokers(result))
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>wirebroker compatibility matrix</title>"
            f"<style>{STYLE}</style></head><body><h1>Compatibility matrix</h1>"
            f"<p>Run {html.escape(result.started_at)}. {legend}; hover a red cell for the failure.</p>"
            f"<ul>{summary}</ul><table><tr><th class='client'>client</th>{head}</tr>{''.join(rows)}</table>"
            f"{suites}</body></html>\n")


def _suite_html(suite) -> str:
    label = BROKER_LABELS.get(suite.broker, suite.broker)
    items = "".join(f"<li><code>{html.escape(t)}</code>: {html.escape(m)}</li>" for t, m in suite.failures)
    return (f"<h2>kafka-python's integration tests on {html.escape(label)}</h2><p>{suite.passed} passed, "
            f"{suite.failed} failed, {suite.errors} errors, {suite.skipped} skipped in {suite.seconds}s "
            f"({html.escape(suite.note)})</p>" + (f"<ul>{items}</ul>" if items else ""))
