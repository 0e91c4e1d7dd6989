"""Writes autograder/hidden/mutant_kill_rates.json: each exercise's mutant kill rate, shipped with the suite.

    python scripts/mutant_kill_rates.py            # from the mutants' headers (fast)
    python scripts/mutant_kill_rates.py --grade    # grade every mutant (minutes): what really loses points
    python scripts/mutant_kill_rates.py --check    # exit 1 when the shipped file has drifted from the headers

The headers are trusted because tests/test_outcomes.py grades every mutant and asserts it fails exactly
its ``# FAILS:`` checks and loses points; ``--grade`` measures it directly.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder.reports import mutants as _mutants  # noqa: E402
from autograder.reports.receipt import KILL_RATES  # noqa: E402


def _graded_kills(cat: dict) -> dict[str, set[str]]:
    from autograder.engine import GradingRun

    killed: dict[str, set[str]] = {}
    run = GradingRun(device="cpu", timeout=60.0, seed=2026)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for ex, metas in cat.items():
                for m in metas:
                    sub = Path(tmp) / f"{ex}-{m['name']}"
                    sub.mkdir()
                    (sub / f"{ex}.py").write_text((_mutants.MUTANTS_DIR / ex / f"{m['name']}.py").read_text())
                    row = run.grade([str(sub)], only=[ex])[0]["exercises"][ex]
                    if row["score"] < row["max_score"]:
                        killed.setdefault(ex, set()).add(m["name"])
    finally:
        run.close()
    return killed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--grade", action="store_true", help="grade every mutant instead of reading the headers")
    p.add_argument("--check", action="store_true", help="compare the shipped file with the headers; exit 1 on drift")
    p.add_argument("--out", default=str(KILL_RATES))
    args = p.parse_args(argv)
    cat = _mutants.catalogue()
    data = _mutants.kill_rates(cat, _graded_kills(cat) if args.grade else None)
    text = _mutants.dumps(data)
    if args.check:
        try:
            have = Path(args.out).read_text(encoding="utf-8")
        except OSError:
            have = ""
        if have != text:
            print(f"{args.out} has drifted from tests/mutants: run python scripts/mutant_kill_rates.py",
                  file=sys.stderr)
            return 1
        return 0
    Path(args.out).write_text(text, encoding="utf-8")
    for ex, v in data["exercises"].items():
        print(f"{ex}: {v['killed']}/{v['mutants']} killed ({100 * v['rate']:.0f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
