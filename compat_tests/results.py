"""What a run of the matrix produces: one Cell per broker × client × scenario, one SuiteResult per broker."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Cell:
    broker: str
    client: str
    scenario: str
    ok: bool
    detail: str
    seconds: float = 0.0


@dataclass
class SuiteResult:
    """kafka-python's own integration tests against one broker."""
    broker: str
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    seconds: float = 0.0
    failures: list[tuple[str, str]] = field(default_factory=list)  # (test id, message)
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.errors == 0 and self.passed > 0


@dataclass
class MatrixResult:
    brokers: dict[str, dict[str, str]] = field(default_factory=dict)  # key -> {"name", "bootstrap", ...}
    clients: list[str] = field(default_factory=list)
    scenarios: list[str] = field(default_factory=list)
    cells: list[Cell] = field(default_factory=list)
    suites: list[SuiteResult] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    started_at: str = ""

    def cell(self, broker: str, client: str, scenario: str) -> Cell | None:
        for cell in self.cells:
            if (cell.broker, cell.client, cell.scenario) == (broker, client, scenario):
                return cell
        return None

    def failed_cells(self, broker: str) -> list[Cell]:
        return [c for c in self.cells if c.broker == broker and not c.ok]

    def to_json(self) -> dict:
        data = asdict(self)
        for suite, raw in zip(self.suites, data["suites"], strict=True):
            raw["ok"] = suite.ok
        return data
