"""The report's account of rounds and quietness: which runs count, each round's figure, the spread, and how busy
the machine was (others' share of the cores, bench.quietness) before and during every run.

A ratio is only given between two comparable entries (runs the quietness gate let through); otherwise the report
says "not comparable" where the ratio would be.
"""

from __future__ import annotations

from bench.runner import is_comparable as comparable

NOT_COMPARABLE = "not comparable"


def ratio_cell(mine: dict | None, theirs: dict | None, ratio: str) -> str:
    """The ratio as formatted, or NOT_COMPARABLE when either side's run was taken on a busy machine."""
    if mine and theirs and not (comparable(mine) and comparable(theirs)):
        return f"**{NOT_COMPARABLE}**"
    return ratio


def rounds_cell(entry: dict | None) -> str:
    """Every round's key figure with others' share of the cores during it (✗ = refused as busy), and the spread."""
    if not entry:
        return "–"
    rounds = entry.get("rounds")
    if not rounds:
        quietness = entry.get("quietness", {}).get("during", {})
        return _round_text(None, quietness.get("others_share"), comparable(entry))
    rounds = [r if isinstance(r, dict) else {"figure": r} for r in rounds]  # results from before the gate: figures
    cells = [_round_text(r["figure"], r.get("others_share"), r.get("comparable", False)) for r in rounds]
    counted = [r["figure"] for r in rounds if r.get("comparable")]
    spread = ""
    if len(counted) > 1 and min(counted) > 0:
        spread = f"; spread {(max(counted) - min(counted)) / min(counted):.0%} over {len(counted)} quiet rounds"
    return ", ".join(cells) + spread


def _round_text(figure: float | None, others_share: float | None, quiet: bool) -> str:
    busy = "others ?" if others_share is None else f"others {others_share:.0%}"
    mark = "" if quiet else " ✗"
    return f"{busy}{mark}" if figure is None else f"{figure:,.1f} ({busy}{mark})"


def quietness_section(results: dict[str, dict], names: dict[str, str]) -> list[str]:
    """Per broker and workload: others' share of the cores before and during the reported run, and the tries the
    gate refused."""
    lines = ["## Quietness of each run", "",
             ("Others' share of the cores (all processes but the harness, the broker under test and the load tools; "
              "bench/quietness.py) in the seconds before and while each reported run ran; a run over the limit is "
              "tried again, and kept as not comparable when no try was quiet."), "",
             "| broker | workload | others before | others during | limit | counted | refused tries |",
             "|---|---|---|---|---|---|---|"]
    for kind, result in results.items():
        for name, entry in result.get("workloads", {}).items():
            quietness = entry.get("quietness")
            if not quietness:
                lines.append(f"| {names[kind]} | {name} | – | – | – | no (taken before the quietness gate) | |")
                continue
            before, during = quietness["before"], quietness["during"]
            refused = len(quietness.get("refused_tries", []))
            lines.append(f"| {names[kind]} | {name} | {before['others_share']:.0%} | {during['others_share']:.0%} | "
                         f"{during['max_others']:.0%} | {'yes' if comparable(entry) else '**no**'} | {refused} |")
    return lines + [""]
