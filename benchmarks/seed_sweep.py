"""Seed sweep: is every check's verdict on every mutant and valid variant the same at every grading seed?

A check that decides a clause through a tolerance margin passes a bug at some seeds and fails it at others
(issue 29: a ``fit`` using AdamW where the contract says Adam lost a point at some seeds, none at others).
This grades the reference solution, every mutant and every ``# VALID:`` file of the chosen exercises at
each seed and prints:

- **unstable**: (file, check) pairs whose verdict changes with the seed — a check to fix, so that it decides
  its clause the same way at every seed;
- **unexpected**: (file, seed) where the failed checks are not the file's ``# FAILS:`` line (a mutant), or
  where anything fails (the solution, a valid variant).

    .venv/bin/python benchmarks/seed_sweep.py [--seeds 20] [--first-seed 1] [--only ex02,ex05] [--jobs 2]
                                              [--json out.json]

Cost: about the time of ``pytest tests/test_outcomes.py`` for those exercises, per seed (a 2-core machine:
all thirteen exercises, ~280 files, ~10-15 min per seed). ``tests/test_seed_sweep.py`` runs a cheap
version inside ``make test``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _loud import require_rows  # noqa: E402
from conftest import make_submission, mutant_files, mutant_meta, valid_files  # noqa: E402

from autograder.core.paths import EXERCISES, SOLUTIONS  # noqa: E402
from autograder.engine.run import GradingRun  # noqa: E402


@dataclass(frozen=True)
class Case:
    """One file to grade: ``expected`` is the set of checks it must fail (empty: full marks)."""

    path: Path
    exercise: str
    kind: str  # "solution" | "mutant" | "valid"
    expected: frozenset[str]

    @property
    def label(self) -> str:
        return f"{self.exercise}/{self.path.stem}" if self.kind != "solution" else f"{self.exercise}/solution"


def cases(exercises: Iterable[str], names: Iterable[str] | None = None) -> list[Case]:
    """The solution, the mutants and the valid variants of ``exercises`` (only the files named, if given)."""
    wanted = set(exercises)
    keep = set(names) if names is not None else None
    out = [Case(SOLUTIONS / f"{ex}.py", ex, "solution", frozenset()) for ex in EXERCISES if ex in wanted]
    out += [Case(p, p.parent.name, "mutant", frozenset(mutant_meta(p)["fails"])) for p in mutant_files()
            if p.parent.name in wanted]
    out += [Case(p, p.parent.name, "valid", frozenset()) for p in valid_files() if p.parent.name in wanted]
    if keep is not None:
        out = [c for c in out if c.kind == "solution" or c.path.stem in keep]
    return out


def grade_at(run: GradingRun, todo: list[Case], tmp: Path, jobs: int) -> dict[Case, dict[str, bool]]:
    """``{case: {check: passed}}`` for every case, graded by one run (one seed), an exercise at a time."""
    out: dict[Case, dict[str, bool]] = {}
    for ex in dict.fromkeys(c.exercise for c in todo):
        group = [c for c in todo if c.exercise == ex]
        paths = []
        for i, case in enumerate(group):
            sub = make_submission(tmp / f"{ex}-{i}", {ex: case.path.read_text()}, only=[ex])
            paths.append(str(sub))
        for case, res in zip(group, run.grade(paths, only=[ex], jobs=jobs), strict=True):
            out[case] = {t["name"]: bool(t["passed"]) for t in res["exercises"][ex]["tests"]}
    return out


def sweep(todo: list[Case], seeds: list[int], jobs: int = 2, timeout: float = 60.0,
          progress: bool = False) -> dict[Case, dict[int, dict[str, bool]]]:
    """``{case: {seed: {check: passed}}}``: every case graded at every seed (one grading run per seed)."""
    verdicts: dict[Case, dict[int, dict[str, bool]]] = {c: {} for c in todo}
    for seed in seeds:
        t0 = time.monotonic()
        run = GradingRun(device="cpu", timeout=timeout, seed=seed)
        tmp = Path(tempfile.mkdtemp(prefix="tapetrace-sweep-"))
        try:
            for case, checks in grade_at(run, todo, tmp, jobs).items():
                verdicts[case][seed] = checks
        finally:
            run.close()
            shutil.rmtree(tmp, ignore_errors=True)
        if progress:
            print(f"seed {seed}: {len(todo)} files in {time.monotonic() - t0:.0f} s", flush=True)
    return verdicts


def unstable(verdicts: dict[Case, dict[int, dict[str, bool]]]) -> list[dict[str, Any]]:
    """(file, check) pairs whose verdict differs between seeds, with the seeds of each verdict."""
    out = []
    for case, by_seed in verdicts.items():
        checks = sorted({name for checks in by_seed.values() for name in checks})
        for name in checks:
            passed = sorted(s for s, checks in by_seed.items() if checks.get(name) is True)
            failed = sorted(s for s, checks in by_seed.items() if checks.get(name) is not True)
            if passed and failed:
                out.append({"file": case.label, "check": name, "passed_at": passed, "failed_at": failed})
    return out


def unexpected(verdicts: dict[Case, dict[int, dict[str, bool]]]) -> list[dict[str, Any]]:
    """(file, seed) whose failed checks are not exactly what the file's header says."""
    out = []
    for case, by_seed in verdicts.items():
        for seed, checks in sorted(by_seed.items()):
            failed = {name for name, ok in checks.items() if not ok}
            if failed != case.expected:
                out.append({"file": case.label, "seed": seed, "failed": sorted(failed),
                            "expected": sorted(case.expected)})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=20, help="how many seeds (default 20)")
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--only", default="", help="exercises, e.g. ex02,ex05 (default: all)")
    ap.add_argument("--files", default="", help="case file stems to keep (the solution is always graded)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", default="", help="write every verdict there")
    args = ap.parse_args(argv)
    prefixes = [p for p in args.only.split(",") if p]
    exercises = [ex for ex in EXERCISES if not prefixes or any(ex.startswith(p) for p in prefixes)]
    todo = cases(exercises, [f for f in args.files.split(",") if f] or None)
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    require_rows(f"files to grade (--only {args.only!r}, --files {args.files!r})", todo)
    print(f"{len(todo)} files of {len(exercises)} exercises, seeds {seeds[0]}..{seeds[-1]}", flush=True)
    t0 = time.monotonic()
    verdicts = sweep(todo, seeds, jobs=args.jobs, progress=True)
    require_rows("verdicts (every graded file's checks)",
                 [v for by_seed in verdicts.values() for checks in by_seed.values() for v in checks])
    bad, wrong = unstable(verdicts), unexpected(verdicts)
    print(f"\n{len(todo)} files x {len(seeds)} seeds in {time.monotonic() - t0:.0f} s")
    print(f"unstable verdicts (file, check: passed at / failed at): {len(bad)}")
    for u in bad:
        print(f"  {u['file']}  {u['check']}: passed at {u['passed_at']} / failed at {u['failed_at']}")
    print(f"results other than the headers say: {len(wrong)}")
    for w in wrong:
        print(f"  {w['file']} seed {w['seed']}: failed {w['failed']}, expected {w['expected']}")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "seeds": seeds, "unstable": bad, "unexpected": wrong,
            "verdicts": {c.label: {str(s): v for s, v in by.items()} for c, by in verdicts.items()}}, indent=1))
    return 1 if bad or wrong else 0


if __name__ == "__main__":
    sys.exit(main())
