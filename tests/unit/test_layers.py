"""The rooms' arrows point one way (pyproject.toml's import-linter contract) and no hand-written modules import each
other in a loop (TYPE_CHECKING imports count: an annotation that names a higher room is an upward arrow too)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
GENERATED = "wirebroker.protocol.messages"


def lint_imports(package_parent: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    return subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
                           "lint_imports_command()", "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
                          cwd=package_parent, env=env, capture_output=True, text=True, timeout=120)


def test_the_layer_contract_is_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_layer_contract_refuses_an_upward_import(tmp_path):
    shutil.copytree(ROOT / "wirebroker", tmp_path / "wirebroker", ignore=shutil.ignore_patterns("__pycache__"))
    segment = tmp_path / "wirebroker" / "log" / "segment.py"
    segment.write_text(segment.read_text() + "\nfrom wirebroker.replica import manager  # noqa: E402\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "wirebroker.log.segment -> wirebroker.replica.manager" in result.stdout, result.stdout


def _import_cycles(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each a loop of imports."""
    edges = {m: sorted(d for d in graph.find_modules_directly_imported_by(m) if d in modules) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in edges[module]:
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return cycles


def test_no_hand_written_modules_import_each_other_in_a_loop():
    graph = grimp.build_graph("wirebroker", cache_dir=None)
    hand_written = {m for m in graph.modules if not m.startswith(GENERATED)}
    assert _import_cycles(graph, hand_written) == []


def test_no_hand_written_file_is_over_600_lines():
    long_files = {str(path.relative_to(ROOT)): n for path in (ROOT / "wirebroker").rglob("*.py")
                  if "messages" not in path.parts and (n := len(path.read_text().splitlines())) > 600}
    assert long_files == {}
