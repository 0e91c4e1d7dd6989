"""Grade the solutions, the stubs and every mutant on an accelerator and on the CPU; print differences.

Usage (on a CUDA machine, nothing installed by the script):
    python scripts/device_check.py --device cuda [--jobs 8] [--timeout 60]
On a TPU host (JAX on the chip, leased to one worker at a time: autograder/engine/chip.py):
    python scripts/device_check.py --device tpu [--only ex04_jax_mlp,...] [--mutants N]
In passes of their own (a device's time is short: each pass saves every verdict as soon as it has it, so a
pass cut short keeps what it graded; the CPU pass can run beside the device's):
    python scripts/device_check.py --device tpu --what mutants --save tpu.json
    JAX_PLATFORMS=cpu python scripts/device_check.py --device cpu --what mutants --save cpu.json
    python scripts/device_check.py --compare tpu.json cpu.json

Prints one line per exercise (score, max, seconds) for the solutions and the stubs on the
device, then every (submission, test) verdict that differs between the device and the CPU
run. Exit status 1 when a verdict differs or the solutions lose points on the device.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.core.paths import EXERCISES, EXERCISES_DIR, SOLUTIONS  # noqa: E402
from autograder.engine.run import GradingRun  # noqa: E402
from autograder.reports.mutants import MUTANTS_DIR, read_headers  # noqa: E402

WHAT = ("solutions", "stubs", "mutants", "valid")


def submissions(tmp: Path, only: list[str], mutants: int | None,
                what: tuple[str, ...] = WHAT, interleave: bool = False) -> dict[str, tuple[str, list[str]]]:
    """name -> (path, exercises to grade): solutions, stubs, one folder per mutant (the first ``mutants`` of each
    exercise in name order; None: all) and per other valid answer (``# VALID:``), as ``what`` asks; the
    exercises in the order of ``only`` (a pass cut short has graded the ones named first)."""
    subs: dict[str, tuple[str, list[str]]] = {}
    if "solutions" in what:
        subs["solutions"] = (str(SOLUTIONS), list(only))
    if "stubs" in what:
        subs["stubs"] = (str(EXERCISES_DIR), list(only))
    taken: dict[str, int] = {}
    for path in sorted(MUTANTS_DIR.glob("ex*/*.py"), key=lambda f: (only.index(f.parent.name)
                                                                    if f.parent.name in only else -1, f.name)):
        ex = path.parent.name
        kind = "mutant" if read_headers(path) is not None else "valid"
        if ex not in only or (kind + ("s" if kind == "mutant" else "")) not in what:
            continue
        if kind == "mutant":
            taken[ex] = taken.get(ex, 0) + 1
            if mutants is not None and taken[ex] > mutants:
                continue
        d = tmp / f"{ex}__{path.stem}"
        d.mkdir()
        shutil.copy(path, d / f"{ex}.py")
        subs[f"{kind} {ex}/{path.stem}"] = (str(d), [ex])
    if interleave:  # the first mutant of each exercise, then the second of each, ...: a pass cut short covers all
        rank = {name: i for i, name in enumerate(subs)}
        nth = {name: sum(1 for o in subs if o.split("/")[0] == name.split("/")[0] and rank[o] < rank[name])
               for name in subs}
        subs = dict(sorted(subs.items(), key=lambda kv: (nth[kv[0]], rank[kv[0]])))
    return subs


def as_named(name: str, res: dict[str, Any]) -> str | None:
    """Why a mutant's or a valid answer's result on its own is wrong (None: as its file says): a mutant fails
    exactly the checks its ``# FAILS:`` names, with its ``# CODE`` keys, and loses points; a valid answer gets
    full marks."""
    kind, _, rest = name.partition(" ")
    if kind not in ("mutant", "valid"):
        return None
    ex, stem = rest.split("/", 1)
    row = res["exercises"][ex]
    failed = {t["name"]: t["code"] for t in row["tests"] if not t["passed"]}
    if kind == "valid":
        return None if not failed and row["score"] == row["max_score"] > 0 else f"failed {sorted(failed)}"
    meta = read_headers(MUTANTS_DIR / ex / f"{stem}.py")
    assert meta is not None
    if set(failed) != set(meta["fails"]):
        return f"failed {sorted(failed)}, its file names {meta['fails']}"
    codes = {k: failed.get(k) for k, v in meta["codes"].items() if failed.get(k) != v}
    if codes:
        return f"codes {codes}, its file names {meta['codes']}"
    return None if row["score"] < row["max_score"] else "lost no points"


class Pass:
    """One device's grading of every submission, saved (``save``) after each result."""

    def __init__(self, device: str, save: Path | None) -> None:
        self.device = device
        self.save = save
        self.results: dict[str, dict[str, Any]] = {}
        self.seconds = 0.0
        self.opens = self.opens0 = 0  # processes that opened the chip (engine.chip.ChipLease.opens)

    def resume(self) -> None:
        """Takes the results ``save`` already holds (a pass cut short by a device's time limit)."""
        if self.save is not None and self.save.exists():
            doc = json.loads(self.save.read_text(encoding="utf-8"))
            self.results, self.seconds = doc["results"], doc["seconds"]
            self.opens = self.opens0 = doc.get("chip_opens", 0)

    def write(self) -> None:
        if self.save is None:
            return
        doc = {"device": self.device, "seconds": round(self.seconds, 1), "chip_opens": self.opens,
               "results": self.results}
        tmp = self.save.with_suffix(".part")
        tmp.write_text(json.dumps(doc), encoding="utf-8")
        tmp.replace(self.save)

    def grade(self, subs: dict[str, tuple[str, list[str]]], jobs: int, timeout: float, seed: int) -> None:
        """Grades ``subs``; on a TPU one submission at a time (the chip is serial anyway), so that each verdict
        is saved as soon as it is known."""
        run = GradingRun(device=self.device, timeout=timeout, seed=seed)
        t0 = time.monotonic() - self.seconds
        try:
            groups: list[list[str]] = []
            by_only: dict[tuple[str, ...], list[str]] = {}
            for name, (_path, only) in subs.items():
                if name in self.results:  # --resume
                    continue
                if run.chip is not None and any(run.chip_exercise(ex) for ex in only):
                    groups.append([name])
                else:
                    by_only.setdefault(tuple(only), []).append(name)
            groups = list(by_only.values()) + groups  # off the chip first (quick), then each turn of the chip
            for names in groups:
                only = subs[names[0]][1]
                results = run.grade([subs[n][0] for n in names], only=list(only), jobs=jobs)
                self.results.update(zip(names, results, strict=True))
                self.seconds = time.monotonic() - t0
                self.opens = self.opens0 + (run.chip.opens if run.chip is not None else 0)
                self.write()
        finally:
            run.close()


def verdicts(res: dict) -> dict[tuple[str, str], bool]:
    return {(ex, t["name"]): t["passed"] for ex, e in res["exercises"].items() for t in e["tests"]}


def report(dev: dict[str, Any], cpu: dict[str, Any], seed: int | None = None) -> int:
    """Prints the device's solutions and stubs and every verdict that differs from the CPU's; the exit status."""
    name = dev["device"]
    first = next(iter(dev["results"].values()), None)
    if first is not None:
        print(f"device: {first['device']}  precision: {first.get('precision')}  seed: {first.get('seed', seed)}")
    bad = 0
    for which in ("solutions", "stubs"):
        for ex, e in dev["results"].get(which, {"exercises": {}})["exercises"].items():
            print(f"{which:<9} {ex:<24} {e['score']:>5g} / {e['max_score']:<4g} {e['seconds']:6.1f} s  {e['status']}")
            if which == "solutions" and e["score"] != e["max_score"]:
                bad += 1
    diffs = []
    both = [n for n in dev["results"] if n in cpu["results"]]
    for sub in both:
        a, b = verdicts(dev["results"][sub]), verdicts(cpu["results"][sub])
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                diffs.append(f"  {sub}: {key[0]}.{key[1]}: {name}={a.get(key)} cpu={b.get(key)}")
    named = [f"  {sub}: on {name}: {why}" for sub, res in dev["results"].items() if (why := as_named(sub, res))]
    only_one = sorted(set(dev["results"]) ^ set(cpu["results"]))
    print(f"graded {len(both)} submissions on both: {name} {dev['seconds']:.0f} s, cpu {cpu['seconds']:.0f} s"
          + (f"; the chip opened {dev['chip_opens']} times" if dev.get("chip_opens") else ""))
    if only_one:
        print(f"graded by one pass only (not compared): {len(only_one)}: {', '.join(only_one)}")
    print(f"verdicts that differ from the CPU run: {len(diffs)}")
    print("\n".join(diffs))
    cases = sum(1 for sub in dev["results"] if sub.split(" ", 1)[0] in ("mutant", "valid"))
    print(f"mutants and valid answers not as their files say, on {name}: {len(named)} of {cases}")
    print("\n".join(named))
    return 1 if diffs or bad or named else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda", choices=["cuda", "tpu", "auto", "cpu"])
    p.add_argument("--jobs", type=int, default=4)
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--only", default="", help="exercises, comma-separated, graded in this order (default: all)")
    p.add_argument("--mutants", type=int, default=None, help="the first N mutants of each exercise (default: all)")
    p.add_argument("--what", default=",".join(WHAT), help="solutions, stubs, mutants, valid (comma-separated)")
    p.add_argument("--save", type=Path, help="grade on --device alone, saving each verdict to this JSON file")
    p.add_argument("--interleave", action="store_true", help="each exercise's first mutant, then each one's second...")
    p.add_argument("--resume", action="store_true", help="with --save: grade only what that file lacks")
    p.add_argument("--compare", nargs=2, type=Path, metavar=("DEVICE_JSON", "CPU_JSON"),
                   help="compare two saved passes; grades nothing")
    args = p.parse_args()
    if args.compare:
        dev, cpu = (json.loads(f.read_text(encoding="utf-8")) for f in args.compare)
        return report(dev, cpu)
    only = [e for e in args.only.split(",") if e] or list(EXERCISES)
    what = tuple(w for w in args.what.split(",") if w)
    if set(what) - set(WHAT):
        p.error(f"--what: one or more of {', '.join(WHAT)}")
    with tempfile.TemporaryDirectory() as tmp:
        subs = submissions(Path(tmp), only, args.mutants, what, args.interleave)
        dev = Pass(args.device, args.save)
        if args.resume:
            dev.resume()
        dev.grade(subs, args.jobs, args.timeout, args.seed)
        if args.save is not None:
            print(f"{args.device}: {len(dev.results)} submissions graded in {dev.seconds:.0f} s"
                  + (f", the chip opened {dev.opens} times" if dev.opens else "") + f"; saved to {args.save}")
            return 0
        cpu = Pass("cpu", None)
        cpu.grade(subs, args.jobs, args.timeout, args.seed)
    as_doc = {p.device: {"device": p.device, "seconds": p.seconds, "chip_opens": p.opens, "results": p.results}
              for p in (dev, cpu)}
    return report(as_doc[dev.device], as_doc["cpu"], args.seed)


if __name__ == "__main__":
    sys.exit(main())
