"""Where a lone cold submission's time goes: per exercise, student side vs reference side.

Grades one submission (the solutions by default) like ``tapetrace grade --device cpu`` with a fresh
compile cache (``TAPETRACE_JAX_CACHE=run``), in this process, with the workers instrumented
(benchmarks/_prof/sitecustomize.py, loaded by the zygote only): for every worker its start
(fork -> loaded: sandbox, imports, module load) and for every probe call its wall time in the grader,
wall and CPU time in the worker, and JAX's own compile time (trace, lowering, XLA backend compile,
from ``jax.monitoring``). Prints a table per exercise and the totals, with the load average.

    .venv/bin/python benchmarks/profile_lone.py [SUBMISSION] [--jobs 2] [--only ex04,ex05] [--seed 2026]
        [--cprofile ex04_jax_mlp:student] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _loud import require_rows, require_score  # noqa: E402

from autograder.core import registry as _registry  # noqa: E402
from autograder.core.paths import EXERCISES, SOLUTIONS  # noqa: E402
from autograder.engine import exercise as _exercise  # noqa: E402
from autograder.engine import run as _engine  # noqa: E402
from autograder.workers import handle as _handle  # noqa: E402
from autograder.workers import intake as _intake  # noqa: E402

_local = threading.local()
RECORDS: list[dict[str, Any]] = []
_lock = threading.Lock()


def _cpu_children() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _instrument() -> None:
    """Grader side: time worker starts and probe calls; take the workers' ``_prof`` records off."""
    init, call, run = _handle.Worker.__init__, _handle.Worker.call, _exercise.ExerciseGrading.run

    def w_init(self: _handle.Worker, launcher: Any, spec: dict[str, Any], *rest: Any, **kw: Any) -> None:
        t = time.perf_counter()
        init(self, launcher, spec, *rest, **kw)
        prof = self.status.pop("_prof", {}) if isinstance(self.status, dict) else {}
        self._who = (spec.get("exercise", ""), spec.get("role", ""))
        _add(kind="start", exercise=self._who[0], role=self._who[1], wall=time.perf_counter() - t, prof=prof)

    def w_call(self: _handle.Worker, probe: str, kwargs: dict[str, Any], timeout: float) -> dict[str, Any]:
        t = time.perf_counter()
        resp = call(self, probe, kwargs, timeout)
        prof = resp.pop("_prof", {}) if isinstance(resp, dict) else {}
        _add(kind="call", exercise=self._who[0], role=self._who[1], probe=probe, wall=time.perf_counter() - t,
             prof=prof)
        return resp

    def g_run(self: _exercise.ExerciseGrading, check: Any) -> dict[str, Any]:
        _local.check = check.name
        t = time.perf_counter()
        try:
            return run(self, check)
        finally:
            _add(kind="check", exercise=self.exercise, role="", probe=check.name, wall=time.perf_counter() - t,
                 prof={})
            _local.check = ""

    def keep_prof(check: Any) -> Any:
        # the grader's intake keeps only the keys it knows: carry the worker's ``_prof`` record past it
        def checked(msg: Any, *rest: Any) -> dict[str, Any]:
            out = check(msg, *rest)
            if isinstance(msg, dict) and isinstance(msg.get("_prof"), dict):
                out["_prof"] = msg["_prof"]
            return out
        return checked

    _intake.status, _intake.response = keep_prof(_intake.status), keep_prof(_intake.response)
    _handle.Worker.__init__, _handle.Worker.call = w_init, w_call
    _exercise.ExerciseGrading.run = g_run


def _add(**rec: Any) -> None:
    rec["check"] = getattr(_local, "check", "")
    rec["t"] = time.perf_counter()
    with _lock:
        RECORDS.append(rec)


def _compile(prof: dict[str, Any]) -> float:
    return sum(v for k, v in prof.get("compile", {}).items() if not k.startswith("#"))


def _xla(prof: dict[str, Any]) -> float:
    return sum(v for k, v in prof.get("compile", {}).items() if k.endswith("backend_compile_duration"))


def report(exercises: list[str], results: dict[str, Any]) -> dict[str, Any]:
    """Prints the per-exercise table; returns the numbers."""
    per: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(float)))
    for r in RECORDS:
        if r["kind"] == "check":
            continue
        d = per[r["exercise"]][r["role"]]
        p = r["prof"]
        d[f"{r['kind']}_wall"] += r["wall"]
        d["worker_cpu"] += p.get("cpu", 0.0)
        d["jax_compile"] += _compile(p)
        d["xla_compile"] += _xla(p)
        d["n_compile"] += p.get("n_compile", 0)
        d["cache_hits"] += p.get("compile", {}).get("#cache_hits", 0)
        d["n_" + r["kind"]] += 1
        if r["kind"] == "start":
            d["load"] += p.get("marks", {}).get("load", 0.0)
    print(f"\n{'exercise':<24} {'side':<9} {'start':>6} {'load':>6} {'calls':>6} {'n':>3} {'wCPU':>6} "
          f"{'jaxC':>6} {'xla':>6} {'#xla':>5} {'hits':>4}  graded s")
    out: dict[str, Any] = {}
    for ex in exercises:
        for role in ("student", "reference"):
            d = per[ex][role]
            print(f"{ex:<24} {role:<9} {d['start_wall']:6.2f} {d['load']:6.2f} {d['call_wall']:6.2f} "
                  f"{int(d['n_call']):3d} {d['worker_cpu']:6.2f} {d['jax_compile']:6.2f} {d['xla_compile']:6.2f} "
                  f"{int(d['n_compile']):5d} {int(d['cache_hits']):4d}  " + (f"{results[ex]['seconds']:.2f}" if role == "student" else ""))
            out.setdefault(ex, {})[role] = dict(d)
    tot = defaultdict(float)
    for ex in exercises:
        for role in ("student", "reference"):
            for k, v in per[ex][role].items():
                tot[f"{role}_{k}"] += v
    print("totals: " + ", ".join(f"{k} {v:.1f}" for k, v in sorted(tot.items()) if not k.endswith("n_start")))
    return {"per_exercise": out, "totals": dict(tot)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("submission", nargs="?", default=str(SOLUTIONS))
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--only", default="")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--cprofile", default="", help="exercise:role whose load and probes to cProfile")
    p.add_argument("--calls", action="store_true", help="print every probe call")
    p.add_argument("--names", action="store_true", help="with --calls: the programs each call compiled")
    p.add_argument("--json", default="")
    args = p.parse_args()
    exercises = [e for e in EXERCISES if not args.only or any(e.startswith(o) for o in args.only.split(","))]
    os.environ.update(TAPETRACE_JAX_CACHE="run", TAPETRACE_PROF="1", TAPETRACE_PROF_CPROFILE=args.cprofile,
                      TAPETRACE_PROF_NAMES="1" if args.names else "0")
    _instrument()
    prefix = ["env", f"PYTHONPATH={ROOT / 'benchmarks' / '_prof'}:{ROOT}"]
    load0 = os.getloadavg()
    c0, cs0, t0 = _cpu_children(), time.process_time(), time.perf_counter()
    run = _engine.GradingRun(device="cpu", seed=args.seed, launch_prefix=prefix)
    t_run = time.perf_counter() - t0
    try:
        rows = run.grade([args.submission], only=exercises, jobs=args.jobs)
    finally:
        run.close()
    wall = time.perf_counter() - t0
    cpu = _cpu_children() - c0 + time.process_time() - cs0
    res = rows[0]["exercises"]
    if args.calls:
        for r in RECORDS:
            pr = r["prof"]
            print(f"{r['exercise'][:4]} {r['role'][:3]:<3} {r['kind']:<5} {r['check'][:28]:<28} "
                  f"{r.get('probe', '')[:24]:<24} {r['wall']:6.2f} cpu {pr.get('cpu', 0):5.2f} "
                  f"jax {_compile(pr):5.2f} xla {_xla(pr):5.2f} #{pr.get('n_compile', 0)}"
                  + (f"  {' '.join(pr.get('names', []))}" if args.names else ""))
    numbers = report(exercises, res)
    print(f"\nlone submission ({len(exercises)} exercises, --jobs {args.jobs}): {wall:.1f} s wall "
          f"(GradingRun start {t_run:.1f} s), {cpu:.1f} s CPU (grader + zygote + workers); "
          f"score {rows[0]['total']:g}/{rows[0]['max_total']:g}; load {load0[0]:.1f} -> {os.getloadavg()[0]:.1f}")
    for r in RECORDS:
        if r["prof"].get("cprofile"):
            print(f"\n--- cProfile {r['exercise']} {r['role']} {r['kind']} {r.get('probe', '')}\n"
                  + r["prof"]["cprofile"])
    if args.json:
        Path(args.json).write_text(json.dumps({"wall": wall, "cpu": cpu, "load": load0, **numbers,
                                               "records": RECORDS}, indent=1, default=str))
    require_rows("probe calls measured", [r for r in RECORDS if r["kind"] == "call"])
    require_rows("worker starts measured", [r for r in RECORDS if r["kind"] == "start"])
    require_score("the workers' own CPU seconds (benchmarks/_prof/sitecustomize.py)",
                  sum(r["prof"].get("cpu", 0.0) for r in RECORDS))
    jax_exercises = {ex for ex in exercises if _registry.worker_needs(ex) != "torch"}
    if jax_exercises:  # a fresh compile cache (TAPETRACE_JAX_CACHE=run): the reference's JAX workers compile
        require_score(f"JAX's compile seconds in the references of {', '.join(sorted(jax_exercises))}",
                      sum(_compile(r["prof"]) for r in RECORDS
                          if r["exercise"] in jax_exercises and r["role"] == "reference"))
    require_score(f"the lone submission {args.submission}", rows[0]["total"], rows[0]["max_total"])


if __name__ == "__main__":
    main()
