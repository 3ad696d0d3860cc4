"""`python -m wirebroker.protocol.codegen [--check]`: regenerate protocol/messages/ from schemas/.

With --check nothing is written: the exit code is 1 and the stale files are named if the committed output differs
from what the schemas generate.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wirebroker.protocol.codegen.generate import generate

ROOT = Path(__file__).resolve().parents[3]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wirebroker.protocol.codegen", description=__doc__)
    parser.add_argument("--schemas", type=Path, default=ROOT / "schemas")
    parser.add_argument("--out", type=Path, default=ROOT / "wirebroker" / "protocol" / "messages")
    parser.add_argument("--check", action="store_true", help="fail if the committed output is stale")
    args = parser.parse_args(argv)
    files = generate(args.schemas)
    stale = sorted(name for name, text in files.items() if _read(args.out / name) != text)
    extra = sorted(p.name for p in args.out.glob("*.py") if p.name not in files)
    if args.check:
        for name in stale + extra:
            print(f"stale: {args.out / name}", file=sys.stderr)
        return 1 if stale or extra else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name in extra:
        (args.out / name).unlink()
    for name in stale:
        (args.out / name).write_text(files[name])
    print(f"wrote {len(stale)} of {len(files)} modules, removed {len(extra)}")
    return 0


def _read(path: Path) -> str | None:
    return path.read_text() if path.exists() else None


if __name__ == "__main__":
    sys.exit(main())
