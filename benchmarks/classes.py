"""The ``class`` section of benchmarks/run.py: a copy class, a distinct class and a lone submission.

A class of N copies of the solutions flatters a grader: every student worker runs the same
programs, so whatever the machine caches (page cache, JAX's compile cache within a run) is hit
N - 1 times. A real class writes every exercise differently, bugs included. The distinct class is
built from what the test suite already holds for every exercise: the solution, the stub, each
mutant (``tests/mutants/exNN_*/*.py``: wrong answers) and each valid variant (files there with a
``# VALID:`` header: other right answers). Student ``i`` takes, for each exercise, the ``i``-th
file of a seeded shuffle of that exercise's files, so no two students share a file for an
exercise while there are enough files, and every exercise is graded in full (a stub or a crash
costs as much as a full answer only when it gets that far; the mix is printed).

The lone submission is what ``otter grade`` and Gradescope pay for *every* submission: one
process, a cold compile cache, the reference computed from scratch, nothing else running. It is
graded ``lone_n`` times (one seed each: inputs and shapes differ, as between two students) and the
median is the figure: on a shared 2-vCPU machine the same work varies by +-15% in CPU-seconds
from one run to the next. A copy of the solutions borrows nearly every program the reference
compiled (autograder/workers/compile_cache.py), so the distinct class's first student is also graded alone,
as many times. Prints numbers and rates only (no timed assertion).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from autograder.core.paths import EXERCISES_DIR, ROOT, SOLUTIONS

TAPETRACE = [sys.executable, "-m", "autograder.cli"]
MUTANTS = ROOT / "tests" / "mutants"


def _kind(path: Path) -> str:
    head = path.read_text()[:2000]
    if path.parent == SOLUTIONS:
        return "solution"
    if path.parent == EXERCISES_DIR:
        return "stub"
    return "valid" if "# VALID:" in head else "mutant"


def class_files(exercise: str) -> list[Path]:
    """Every version of one exercise the test suite holds: solution, stub, mutants, valid variants."""
    files = [SOLUTIONS / f"{exercise}.py", EXERCISES_DIR / f"{exercise}.py"]
    folder = MUTANTS / exercise
    if folder.is_dir():
        files += sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))
    return [p for p in files if p.exists()]


def distinct_class(folder: Path, n: int, exercises: list[str], seed: int) -> tuple[list[str], Counter]:
    """N submission folders, each exercise written differently by each student (while files last).

    Returns:
        The folders (sorted) and how many exercise files of each kind the class holds.
    """
    rng = random.Random(seed)
    order = {ex: rng.sample(class_files(ex), k=len(class_files(ex))) for ex in exercises}
    kinds: Counter = Counter()
    out = []
    for i in range(n):
        sub = folder / f"student{i:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        for ex in exercises:
            src = order[ex][i % len(order[ex])]
            shutil.copy(src, sub / f"{ex}.py")
            kinds[_kind(src)] += 1
        out.append(str(sub))
    return out, kinds


def copy_class(folder: Path, n: int, exercises: list[str]) -> list[str]:
    """N copies of the solutions."""
    out = []
    for i in range(n):
        sub = folder / f"copy{i:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        for ex in exercises:
            shutil.copy(SOLUTIONS / f"{ex}.py", sub / f"{ex}.py")
        out.append(str(sub))
    return out


def _grade(paths: list[str], exercises: list[str], seed: int, jobs: int | None, out: Path) -> dict[str, Any]:
    cmd = [*TAPETRACE, "grade", *paths, "--only", ",".join(exercises), "--device", "cpu", "--seed", str(seed),
           "--json", str(out), "--quiet"] + (["--jobs", str(jobs)] if jobs else [])
    before = os.times()
    t0 = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=dict(os.environ, TAPETRACE_JAX_CACHE="run"))
    wall = time.monotonic() - t0
    after = os.times()
    if done.returncode != 0:
        raise RuntimeError(f"tapetrace grade exited {done.returncode}: {done.stderr[-800:]}")
    rows = json.loads(out.read_text())
    return {"wall": wall, "cpu": (after.children_user - before.children_user)
            + (after.children_system - before.children_system), "rows": rows}


def bench_class(tmp: Path, exercises: list[str], seed: int, n: int, line: Any, load: Any,
                lone_n: int = 3) -> dict[str, Any]:
    """Runs the section; ``line(label, value)`` and ``load()`` are run.py's printers."""
    print(f"\n[class] {n} submissions x {len(exercises)} exercises, --jobs 2, cold compile cache; {load()}")
    lone_path = copy_class(tmp / "lone", 1, exercises)
    lones = []
    for k in range(max(1, lone_n)):
        got = _grade(lone_path, exercises, seed + k, None, tmp / f"lone{k}.json")
        lones.append(got)
        line(f"lone cold submission, seed {seed + k}", f"{got['wall']:6.1f} s wall, {got['cpu']:6.1f} s CPU; {load()}")
    lone = sorted(lones, key=lambda r: r["wall"])[len(lones) // 2]
    line(f"lone cold submission (median of {len(lones)}; default --jobs; what otter/Gradescope pay each)",
         f"{lone['wall']:6.1f} s wall, {lone['cpu']:6.1f} s CPU   (target <= 15 s)")
    paths, kinds = distinct_class(tmp / "distinct", n, exercises, seed)
    # the solutions borrow most of what the reference compiled (autograder/workers/compile_cache.py): a student who
    # wrote every exercise differently borrows less, so the distinct class's first student is timed alone too
    others = [_grade(paths[:1], exercises, seed + k, None, tmp / f"lone_distinct{k}.json") for k in range(len(lones))]
    other = sorted(others, key=lambda r: r["wall"])[len(others) // 2]
    line(f"lone cold submission of the distinct class's first student (median of {len(others)})",
         f"{other['wall']:6.1f} s wall, {other['cpu']:6.1f} s CPU")
    copies = _grade(copy_class(tmp / "copies", n, exercises), exercises, seed, 2, tmp / "copies.json")
    assert all(r["total"] == r["max_total"] for r in copies["rows"]), "a copy of the solutions lost points"
    distinct = _grade(paths, exercises, seed, 2, tmp / "distinct.json")
    assert len(distinct["rows"]) == n, "a submission of the distinct class has no row"
    rates = {}
    for label, got in (("copy class", copies), ("distinct class", distinct)):
        rates[label] = 3600 * n / got["wall"]
        line(f"{label}: {n} submissions", f"{got['wall']:6.1f} s wall, {got['cpu']:6.1f} s CPU, "
                                          f"{rates[label]:6.0f} submissions/hour; {load()}")
    line("distinct class: versions of exercises graded", ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    line("distinct class rate / copy class rate", f"{rates['distinct class'] / rates['copy class']:.2f}x"
                                                 "   (target >= 500/hour distinct)")
    totals = sorted(r["total"] for r in distinct["rows"])
    line("distinct class scores (min / median / max)", f"{totals[0]:g} / {totals[len(totals) // 2]:g} / {totals[-1]:g}")
    return {"n": n, "lone_wall": lone["wall"], "lone_cpu": lone["cpu"], "lone_distinct_wall": other["wall"],
            "lone_distinct_cpu": other["cpu"],
            "lone_runs": [{"wall": r["wall"], "cpu": r["cpu"]} for r in lones], "copy_wall": copies["wall"],
            "copy_cpu": copies["cpu"], "distinct_wall": distinct["wall"], "distinct_cpu": distinct["cpu"],
            "copy_rate_per_hour": rates["copy class"], "distinct_rate_per_hour": rates["distinct class"],
            "distinct_kinds": dict(kinds)}
