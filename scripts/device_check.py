"""Grade the solutions, the stubs and every mutant on an accelerator and on the CPU; print differences.

Usage (on a CUDA machine, nothing installed by the script):
    python scripts/device_check.py --device cuda [--jobs 8] [--timeout 60]
On a TPU host (JAX on the chip, leased to one worker at a time: autograder/engine/chip.py):
    python scripts/device_check.py --device tpu [--only ex04_jax_mlp,...] [--mutants N]

Prints one line per exercise (score, max, seconds) for the solutions and the stubs on the
device, then every (submission, test) verdict that differs between the device and the CPU
run. Exit status 1 when a verdict differs or the solutions lose points on the device.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.core.paths import EXERCISES, EXERCISES_DIR, SOLUTIONS  # noqa: E402
from autograder.engine.run import GradingRun  # noqa: E402


def submissions(tmp: Path, only: list[str], mutants: int | None) -> dict[str, tuple[str, list[str]]]:
    """name -> (path, exercises to grade): solutions, stubs, one folder per mutant (the first ``mutants`` of each
    exercise in name order; None: all)."""
    subs = {"solutions": (str(SOLUTIONS), list(only)), "stubs": (str(EXERCISES_DIR), list(only))}
    taken: dict[str, int] = {}
    for path in sorted((ROOT / "tests" / "mutants").glob("ex*/*.py")):
        ex = path.parent.name
        if ex not in only or "# MUTANT:" not in path.read_text()[:2000]:
            continue
        taken[ex] = taken.get(ex, 0) + 1
        if mutants is not None and taken[ex] > mutants:
            continue
        d = tmp / f"{ex}__{path.stem}"
        d.mkdir()
        shutil.copy(path, d / f"{ex}.py")
        subs[f"mutant {ex}/{path.stem}"] = (str(d), [ex])
    return subs


def grade_all(device: str, subs: dict, jobs: int, timeout: float, seed: int) -> tuple[dict, float, int]:
    """Each submission's result, the seconds it all took, and the chip's turns (0 off a TPU: one chip open each)."""
    run = GradingRun(device=device, timeout=timeout, seed=seed)
    t0 = time.monotonic()
    out = {}
    try:
        by_only: dict[tuple, list[str]] = {}
        for name, (_path, only) in subs.items():
            by_only.setdefault(tuple(only), []).append(name)
        for only, names in by_only.items():
            results = run.grade([subs[n][0] for n in names], only=list(only), jobs=jobs)
            out.update(zip(names, results, strict=True))
    finally:
        run.close()
    return out, time.monotonic() - t0, run.chip.turns if run.chip is not None else 0


def verdicts(res: dict) -> dict[tuple[str, str], bool]:
    return {(ex, t["name"]): t["passed"] for ex, e in res["exercises"].items() for t in e["tests"]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda", choices=["cuda", "tpu", "auto"])
    p.add_argument("--jobs", type=int, default=4)
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--only", default="", help="exercises, comma-separated (default: all)")
    p.add_argument("--mutants", type=int, default=None, help="the first N mutants of each exercise (default: all)")
    args = p.parse_args()
    only = [e for e in args.only.split(",") if e] or list(EXERCISES)
    with tempfile.TemporaryDirectory() as tmp:
        subs = submissions(Path(tmp), only, args.mutants)
        dev, dev_s, turns = grade_all(args.device, subs, args.jobs, args.timeout, args.seed)
        cpu, cpu_s, _ = grade_all("cpu", subs, args.jobs, args.timeout, args.seed)
    first = dev["solutions"]
    print(f"device: {first['device']}  precision: {first['precision']}  seed: {args.seed}")
    bad = 0
    for which in ("solutions", "stubs"):
        for ex, e in dev[which]["exercises"].items():
            print(f"{which:<9} {ex:<24} {e['score']:>5g} / {e['max_score']:<4g} {e['seconds']:6.1f} s  {e['status']}")
            if which == "solutions" and e["score"] != e["max_score"]:
                bad += 1
    diffs = []
    for name in subs:
        a, b = verdicts(dev[name]), verdicts(cpu[name])
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                diffs.append(f"  {name}: {key[0]}.{key[1]}: {args.device}={a.get(key)} cpu={b.get(key)}")
    print(f"graded {len(subs)} submissions: {args.device} {dev_s:.0f} s, cpu {cpu_s:.0f} s"
          + (f"; the chip changed hands {turns} times" if turns else ""))
    print(f"verdicts that differ from the CPU run: {len(diffs)}")
    print("\n".join(diffs))
    return 1 if diffs or bad else 0


if __name__ == "__main__":
    sys.exit(main())
