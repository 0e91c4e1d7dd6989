"""The ``scale`` section of benchmarks/run.py: Dask local cluster vs ``--jobs``, and a projection.

Measures, in one run, on N copies of the solutions (cold compile cache each time):
- start-up: a :class:`GradingRun` (zygote) vs a ``LocalCluster`` of 1 and 2 workers whose
  plugin started one grading run each;
- grading wall time with ``--jobs 1``/``--jobs 2`` (one process) and ``local:1``/``local:2``
  (one thread per Dask worker), hence Dask's cost per (submission, exercise) task;
- the 1 -> 2 worker speed-up on the local cluster;
then projects 10,000 submissions onto K workers (one core each): hours for K, and the K for one
hour. Prints numbers and ratios only (no timed assertion: a shared machine is noisy).
"""

from __future__ import annotations

import math
import os
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

from autograder.core.paths import EXERCISES, SOLUTIONS
from autograder.engine.run import GradingRun
from autograder.scaleout.cluster import ClusterRun

CLASS_SIZE = 10_000


def _copies(folder: Path, n: int, exercises: list[str]) -> list[str]:
    out = []
    for i in range(n):
        sub = folder / f"s{i:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        for ex in exercises:
            shutil.copy(SOLUTIONS / f"{ex}.py", sub / f"{ex}.py")
        out.append(str(sub))
    return out


def _measure(kind: str, k: int, paths: list[str], exercises: list[str], seed: int) -> dict[str, Any]:
    t0 = time.monotonic()
    if kind == "jobs":
        run: Any = GradingRun(device="cpu", seed=seed)
    else:
        run = ClusterRun(cluster=f"local:{k}", device="cpu", seed=seed)
    built = time.monotonic()
    trip = None
    if kind == "cluster":  # Dask's own cost per task: a trivial task's round trip, client -> worker -> client
        for i in range(5):
            run.client.submit(abs, -i, pure=False).result()
        t = time.monotonic()
        for i in range(100):
            run.client.submit(abs, -i, pure=False).result()
        trip = (time.monotonic() - t) / 100
    t1 = time.monotonic()
    load = os.getloadavg()[0]
    try:
        rows = run.grade(paths, only=exercises, jobs=k)
    finally:
        t2 = time.monotonic()
        run.close()
    per_sub = [sum(e["seconds"] for e in r["exercises"].values()) for r in rows]
    return {"startup": built - t0, "wall": t2 - t1, "close": time.monotonic() - t2,
            "round_trip": trip, "load": load,
            "scores": [[e["score"] for e in r["exercises"].values()] for r in rows], "per_submission": per_sub}


def bench_scale(tmp: Path, exercises: list[str], seed: int, n: int, line: Any, load: Any) -> dict[str, Any]:
    """Runs the section; ``line(label, value)`` and ``load()`` are run.py's printers."""
    paths = _copies(tmp / "scale", n, exercises)
    tasks = n * len(exercises)
    saved = os.environ.get("TAPETRACE_JAX_CACHE")
    os.environ["TAPETRACE_JAX_CACHE"] = "run"  # cold: every run (every worker) compiles for itself
    try:
        m = {f"{kind}{k}": _measure(kind, k, paths, exercises, seed)
             for kind, k in (("jobs", 1), ("cluster", 1), ("jobs", 2), ("cluster", 2))}
    finally:
        if saved is None:
            os.environ.pop("TAPETRACE_JAX_CACHE", None)
        else:
            os.environ["TAPETRACE_JAX_CACHE"] = saved
    j1, c1, j2, c2 = m["jobs1"], m["cluster1"], m["jobs2"], m["cluster2"]
    same = all(v["scores"] == j1["scores"] for v in m.values())
    print(f"\n[scale] {n} copies of the solutions ({len(exercises)} exercises, {tasks} tasks), cold cache; {load()}")
    for label, v in (("--jobs 1 (one process)", j1), ("--cluster local:1 (one Dask worker, 1 thread)", c1),
                     ("--jobs 2", j2), ("--cluster local:2 (two workers, 1 thread each)", c2)):
        line(label, f"start {v['startup']:5.1f} s, grade {v['wall']:6.1f} s, close {v['close']:4.1f} s"
                    f"  (load {v['load']:.1f})")
    line("same scores in all four", str(same))
    line("cluster start-up over a GradingRun's (local:1 / local:2)",
         f"+{c1['startup'] - j1['startup']:.1f} s / +{c2['startup'] - j2['startup']:.1f} s")
    line("Dask round trip of a trivial task (local:1 / local:2)",
         f"{1000 * c1['round_trip']:.1f} ms / {1000 * c2['round_trip']:.1f} ms")
    over1 = (c1["wall"] - j1["wall"]) / tasks
    over2 = (c2["wall"] - j2["wall"]) / tasks
    line("Dask cost per task, 1 worker vs --jobs 1", f"{1000 * over1:+.0f} ms ({c1['wall'] / j1['wall']:.2f}x wall)")
    line("Dask cost per task, 2 workers vs --jobs 2 (each worker its own reference)",
         f"{1000 * over2:+.0f} ms ({c2['wall'] / j2['wall']:.2f}x wall)")
    speedup = c1["wall"] / c2["wall"]
    line("speed-up local:1 -> local:2", f"{speedup:.2f}x  (--jobs 1 -> 2: {j1['wall'] / j2['wall']:.2f}x)")
    # each worker pays the reference once, in its first submission (the two workers in parallel)
    first, rest = c1["per_submission"][0], c1["per_submission"][1:] or c1["per_submission"]
    reference = max(0.0, first - statistics.median(rest))
    steady_speedup = max(1e-9, c1["wall"] - reference) / max(1e-9, c2["wall"] - reference)
    line("same, the reference's once-per-worker cost taken out", f"{steady_speedup:.2f}x")

    # projection: one worker's warm-up (start-up + the reference) and its steady cost per submission;
    # K workers at the measured 2-worker efficiency (pessimistic here: the client and the scheduler
    # share the 2 CPUs with the workers)
    steady = statistics.median(rest) + max(0.0, over1) * len(exercises)
    warmup = c1["startup"] + reference
    eff = min(1.0, steady_speedup / 2)
    print(f"  projection to {CLASS_SIZE:,} submissions: per worker (1 core) {steady:.1f} s per submission"
          f" after a {warmup:.0f} s warm-up; efficiency {eff:.2f} (local:2 on {os.cpu_count()} CPUs)")
    hours = {}
    for k in (1, 8, 32, 128, 512):
        hours[k] = (warmup + CLASS_SIZE * steady / (k * (eff if k > 1 else 1.0))) / 3600
        line(f"K = {k} workers", f"{hours[k]:7.2f} h")
    k_hour = math.ceil(CLASS_SIZE * steady / (eff * max(1.0, 3600 - warmup)))
    k_ideal = math.ceil(CLASS_SIZE * steady / max(1.0, 3600 - warmup))
    line(f"workers for {CLASS_SIZE:,} submissions in one hour", f"K = {k_hour} at efficiency {eff:.2f}, "
         f"K = {k_ideal} with a core per worker" + ("" if len(exercises) == len(EXERCISES) else
                                                   f"  (only {len(exercises)}/{len(EXERCISES)} exercises graded)"))
    return {"n": n, "tasks": tasks, "same_scores": same, "speedup_cluster_1_to_2": speedup,
            "speedup_cluster_1_to_2_steady": steady_speedup, "reference_s": reference,
            "per_task_overhead_s": {"1": over1, "2": over2}, "steady_s_per_submission": steady,
            "warmup_s": warmup, "efficiency": eff, "hours": hours, "workers_for_one_hour": k_hour,
            "workers_for_one_hour_ideal": k_ideal,
            **{k: {kk: vv for kk, vv in v.items() if kk != "scores"} for k, v in m.items()}}
