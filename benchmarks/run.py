"""Grading benchmarks, printed as ratios and rates measured in one run (``make bench``).

Sections (all by default; pick with --sections):
  iso     one full submission, isolated (``tapetrace grade``) vs the same probes in one process
  jobs    --jobs 2 vs --jobs 1 on N copies of the solutions (rate in submissions/hour)
  perex   per-exercise grading time (from the jobs run; first submission also pays the reference)
  class   a lone cold submission (what otter/Gradescope pay each), and N copies of the solutions vs
          N distinct submissions built from the mutants and valid variants (benchmarks/classes.py)
  otter   ``otter run`` vs ``tapetrace grade`` on the same filled notebook
  load    M mixed submissions (honest, wrong, empty, corrupt, hostile) with --jobs 2: M rows?
  safety  zygote-forked workers vs spawned interpreters: probe answers bit-identical?
  cache   the reference's compiled programs lent to students' workers by key, vs nothing lent
  scale   Dask local cluster vs --jobs (start-up, cost per task, 1 -> 2 workers) and a projection to
          10,000 submissions on K workers (benchmarks/scale.py; needs tapetrace[cluster])
  envelope  peak memory and wall time of a solutions submission: this machine at --jobs 1 and the
          planned --jobs, and in Docker envelopes (Gradescope's 768 MiB / 0.5 CPU by default; --envelopes)
          (benchmarks/envelope.py)

Targets (2-core CPU machine): one lone cold submission <= 15 s wall; >= 500 distinct
submissions/hour with --jobs 2; isolation overhead <= 1.3x. Timings on a shared machine are noisy: the load
average is printed with every number, and CPU seconds beside wall seconds.

    .venv/bin/python benchmarks/run.py [--quick] [--sections iso,jobs] [--only ex01,ex04] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _loud import require_rows, require_score  # noqa: E402

from autograder.core.paths import EXERCISES, EXERCISES_DIR, SOLUTIONS  # noqa: E402
from autograder.hidden import available_exercises  # noqa: E402
from autograder.workers.environment import worker_env  # noqa: E402

TAPETRACE = [sys.executable, "-m", "autograder.cli"]
SECTIONS = ("iso", "jobs", "perex", "class", "otter", "load", "safety", "cache", "scale", "envelope")


def _cpu_children() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def timed(cmd: list[str], env: dict | None = None, timeout: float = 7200) -> tuple[float, float, str, str]:
    """(wall s, CPU s of the whole process tree that was waited for, stdout, stderr)."""
    c0, t0 = _cpu_children(), time.monotonic()
    cp = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout)
    wall, cpu = time.monotonic() - t0, _cpu_children() - c0
    if cp.returncode not in (0,):
        raise RuntimeError(f"{' '.join(cmd[:6])}... exited {cp.returncode}: {cp.stderr[-800:]}")
    return wall, cpu, cp.stdout, cp.stderr


def _planned_jobs() -> int:
    """``tapetrace grade``'s --jobs default here (the CPUs and memory this process gets: _sizing.plan)."""
    from autograder.workers import envelope as _envelope
    from autograder.workers import sizing as _sizing

    return _sizing.plan(_envelope.current()).jobs


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def full_submission(folder: Path, exercises: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for ex in exercises:
        shutil.copy(SOLUTIONS / f"{ex}.py", folder / f"{ex}.py")
    return folder


def line(label: str, value: str) -> None:
    print(f"  {label:<58} {value}", flush=True)


# -------------------------------------------------------------------- sections
def bench_iso(tmp: Path, exercises: list[str], seed: int, reps: int) -> dict[str, Any]:
    sub = full_submission(tmp / "iso", exercises)
    only = ",".join(exercises)
    runs: dict[str, list[tuple[float, float]]] = {"jobs1": [], "auto": [], "warm": [], "inproc": []}
    for rep in range(reps):
        # cold: an empty compile cache (a fresh persistent one for "auto", then "warm" re-runs on it)
        cache = tmp / f"iso-cache-{rep}"
        for label, extra, env in (("jobs1", ["--jobs", "1"], {"TAPETRACE_JAX_CACHE": "run"}),
                                  ("auto", [], {"TAPETRACE_JAX_CACHE": str(cache)}),
                                  ("warm", [], {"TAPETRACE_JAX_CACHE": str(cache)})):
            w, c, _o, _e = timed([*TAPETRACE, "grade", str(sub), "--only", only, "--device", "cpu", "--seed",
                                  str(seed), "--json", str(tmp / f"iso-{label}.json"), "--quiet", *extra],
                                 env=dict(os.environ, **env))
            runs[label].append((w, c))
        w2, c2, out, _e = timed([sys.executable, str(ROOT / "benchmarks" / "inprocess.py"), str(sub), "--only", only,
                                 "--seed", str(seed)], env=worker_env())
        runs["inproc"].append((w2, c2))
        ip = json.loads(out.strip().splitlines()[-1])
    res = json.loads((tmp / "iso-jobs1.json").read_text())
    res = res[0] if isinstance(res, list) else res  # one submission's row
    require_score("[iso] the solutions, isolated", res["total"], res["max_total"])
    require_score("[iso] the solutions, in one process", sum(e["score"] for e in ip["exercises"].values()))
    best = {k: (min(x[0] for x in v), min(x[1] for x in v)) for k, v in runs.items()}
    (wi, ci), (wa, ca), (wp, cp), (ww, cw) = best["jobs1"], best["auto"], best["inproc"], best["warm"]
    same = all(res["exercises"][e]["score"] == ip["exercises"][e]["score"] for e in exercises)
    auto_jobs = _planned_jobs()
    print(f"\n[iso] one full submission ({len(exercises)} exercises), best of {reps}; {load()}")
    line("isolated, --jobs 1 (zygote + sandboxed workers)", f"{wi:6.1f} s wall, {ci:6.1f} s CPU")
    line("one process, same checks and probes, no isolation", f"{wp:6.1f} s wall, {cp:6.1f} s CPU")
    line("isolation overhead (isolated --jobs 1 / one process)", f"{wi / wp:5.2f}x wall, {ci / max(cp, 1e-9):5.2f}x CPU"
         "   (target <= 1.3x)")
    line(f"isolated, default --jobs ({auto_jobs} here)", f"{wa:6.1f} s wall, {ca:6.1f} s CPU"
         + ("   (target <= 15 s)" if len(exercises) == len(EXERCISES) else ""))
    line("same, re-run with the same seed (persistent compile cache warm)", f"{ww:6.1f} s wall, {cw:6.1f} s CPU")
    line("same scores both ways", str(same))
    line("per exercise, isolated (s)", " ".join(f"{e[:4]}={res['exercises'][e]['seconds']:.1f}" for e in exercises))
    line("per exercise, one process (s)", " ".join(f"{e[:4]}={ip['exercises'][e]['seconds']:.1f}" for e in exercises))
    return {"isolated_wall": wi, "isolated_cpu": ci, "inprocess_wall": wp, "inprocess_cpu": cp,
            "isolated_default_jobs_wall": wa, "isolated_default_jobs_cpu": ca,
            "isolated_default_jobs_warm_wall": ww, "isolated_default_jobs_warm_cpu": cw,
            "ratio_wall": wi / wp, "ratio_cpu": ci / max(cp, 1e-9), "same_scores": same,
            "per_exercise_isolated": {e: res["exercises"][e]["seconds"] for e in exercises},
            "per_exercise_inprocess": {e: ip["exercises"][e]["seconds"] for e in exercises}}


def bench_jobs(tmp: Path, exercises: list[str], seed: int, n: int) -> dict[str, Any]:
    base = full_submission(tmp / "jobs" / "s000", exercises)
    subs = [base] + [full_submission(tmp / "jobs" / f"s{i:03d}", exercises) for i in range(1, n)]
    only = ",".join(exercises)
    out: dict[str, Any] = {}
    print(f"\n[jobs] {n} full submissions ({len(exercises)} exercises each)")
    for jobs in (1, 2):
        js = tmp / f"jobs{jobs}.json"
        w, c, _o, _e = timed([*TAPETRACE, "grade", *map(str, subs), "--only", only, "--device", "cpu", "--seed",
                              str(seed), "--jobs", str(jobs), "--json", str(js), "--quiet"],
                             env=dict(os.environ, TAPETRACE_JAX_CACHE="run"))  # cold: nothing from earlier runs
        rows = json.loads(js.read_text())
        assert len(rows) == n and all(r["total"] == r["max_total"] for r in rows), "a solution lost points"
        out[jobs] = {"wall": w, "cpu": c, "rate_per_hour": 3600 * n / w, "rows": rows}
        line(f"--jobs {jobs}", f"{w:6.1f} s wall, {c:6.1f} s CPU, {3600 * n / w:6.0f} submissions/hour; {load()}")
    speed = out[1]["wall"] / out[2]["wall"]
    line("speed-up --jobs 2 vs --jobs 1", f"{speed:5.2f}x")
    full = len(exercises) == len(EXERCISES)
    line("--jobs 2 rate" + ("" if full else f" (only {len(exercises)}/{len(EXERCISES)} exercises)"),
         f"{out[2]['rate_per_hour']:.0f}/hour" + ("   (target >= 300)" if full else ""))
    return {"n": n, "wall_jobs1": out[1]["wall"], "wall_jobs2": out[2]["wall"], "speedup": speed,
            "rate_jobs1": out[1]["rate_per_hour"], "rate_jobs2": out[2]["rate_per_hour"],
            "rows_jobs1": out[1]["rows"]}


def bench_perex(rows: list[dict[str, Any]], exercises: list[str]) -> dict[str, Any]:
    print(f"\n[perex] per-exercise grading time, --jobs 1, {len(rows)} submissions")
    out = {}
    for ex in exercises:
        secs = [r["exercises"][ex]["seconds"] for r in rows]
        later = secs[1:] or secs
        out[ex] = {"first": secs[0], "median": statistics.median(later), "max": max(later)}
        line(ex, f"first {secs[0]:5.1f} s (pays the reference)   then median {statistics.median(later):5.1f} s, "
                 f"max {max(later):5.1f} s")
    total = sum(v["median"] for v in out.values())
    line("sum of medians (a full submission once the reference is cached)", f"{total:5.1f} s")
    return out


def _real_bridge(tmp: Path, exercises: list[str], seed: int, jobs: int) -> tuple[Path, Path] | None:
    """The project's own otter zip and a student_template notebook filled with the solutions, if built."""
    try:
        from autograder.builders import notebook as _notebook
        from autograder.builders import otter_zip as _otter_zip
    except ImportError:
        return None
    template = ROOT / "student_template" / _notebook.NOTEBOOK
    if not template.exists():
        return None
    nb = _notebook.fill_with(json.loads(template.read_text(encoding="utf-8")),
                             {ex: (SOLUTIONS / f"{ex}.py").read_text() for ex in exercises})
    path = tmp / "filled" / "submission.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_notebook.dumps(nb), encoding="utf-8")
    z = _otter_zip.build_zip(tmp / "otter-ag" / _otter_zip.ZIP_NAME, exercises, timeout=60.0, device="cpu",
                             jobs=jobs, seed=seed)
    return z, path


def bench_otter(tmp: Path, exercises: list[str], seed: int, zip_path: str | None) -> dict[str, Any]:
    import otter_bridge

    jobs = _planned_jobs()
    try:
        real = None if zip_path else _real_bridge(tmp, exercises, seed, jobs)
    except Exception as err:  # noqa: BLE001 - fall back to the stand-in, say why
        print(f"  (the project's otter zip could not be built: {type(err).__name__}: {err}; using a stand-in)")
        real = None
    if real:
        (z, nb), kind = real, f"the project's otter zip (tapetrace build), --jobs {jobs} in both"
    else:
        nb = otter_bridge.make_notebook(tmp / "filled.ipynb",
                                        {ex: (SOLUTIONS / f"{ex}.py").read_text() for ex in exercises})
        z = Path(zip_path) if zip_path else otter_bridge.make_autograder(tmp / "otter-ag", exercises, seed=seed)
        kind = "the given zip" if zip_path else "stand-in bridge zip"
    otter = str(Path(sys.executable).parent / "otter")
    (tmp / "otter-out").mkdir(exist_ok=True)
    env = dict(os.environ, TMPDIR=str(tmp))  # the bridge caches its engine run under TMPDIR: start cold
    w_o, c_o, _o, _e = timed([otter, "run", "--no-logo", "-a", str(z), "-o", str(tmp / "otter-out"), str(nb)],
                             env=env)
    res = json.loads((tmp / "otter-out" / "results.json").read_text())
    otter_score = sum(t.get("score", 0) for t in res["tests"] if "max_score" in t)
    w_t, c_t, _o, _e = timed([*TAPETRACE, "grade", str(nb), "--only", ",".join(exercises), "--device", "cpu",
                              "--seed", str(seed), "--jobs", str(jobs), "--json", str(tmp / "nb.json"), "--quiet"])
    tt = json.loads((tmp / "nb.json").read_text())
    print(f"\n[otter] one filled notebook ({len(exercises)} exercises), {kind}; {load()}")
    require_score("[otter] otter run's score", otter_score)
    require_score("[otter] tapetrace grade's score", tt["total"])
    line("otter run", f"{w_o:6.1f} s wall, {c_o:6.1f} s CPU, score {otter_score:g}")
    line("tapetrace grade", f"{w_t:6.1f} s wall, {c_t:6.1f} s CPU, score {tt['total']:g}")
    line("otter run / tapetrace grade", f"{w_o / w_t:5.2f}x wall")
    return {"otter_wall": w_o, "tapetrace_wall": w_t, "ratio": w_o / w_t, "otter_score": otter_score,
            "tapetrace_score": tt["total"], "bridge": kind}


def _mixed(folder: Path, n: int, exercises: list[str]) -> list[tuple[Path, str]]:
    """n submissions cycling through honest, wrong, empty, corrupt and hostile kinds (target: first exercise)."""
    import re

    target = exercises[0]
    mutants = sorted((ROOT / "tests" / "mutants" / target).glob("*.py"))
    attacks = [p for p in sorted((ROOT / "tests" / "adversarial" / "attacks").glob("*.py"))
               if re.search(rf"#\s*TARGET:\s*{target}\b", p.read_text()[:600])
               and "PORT" not in p.read_text()]  # network attacks need the test's listener
    kinds: list[tuple[str, Path | None]] = [("solution", None), ("stub", None)]
    kinds += [(f"mutant-{p.stem}", p) for p in mutants[:4]] + [(f"attack-{p.stem}", p) for p in attacks]
    kinds += [("corrupt-zip", None), ("empty-dir", None), ("notebook", None)]
    out = []
    for i in range(n):
        kind, src = kinds[i % len(kinds)]
        base = folder / f"{i:03d}-{kind}"
        if kind == "corrupt-zip":
            base = base.with_suffix(".zip")
            base.write_bytes(b"PK garbage")
        elif kind == "empty-dir":
            base.mkdir(parents=True)
        elif kind == "notebook":
            import otter_bridge

            base = otter_bridge.make_notebook(base.with_suffix(".ipynb"),
                                              {ex: (SOLUTIONS / f"{ex}.py").read_text() for ex in exercises})
        else:
            full_submission(base, exercises)
            if kind == "stub":
                shutil.copy(EXERCISES_DIR / f"{target}.py", base / f"{target}.py")
            elif src is not None:
                shutil.copy(src, base / f"{target}.py")
        out.append((base, kind))
    return out


def bench_load_real(tmp: Path, exercises: list[str], n: int, timeout: float) -> dict[str, Any]:
    subs = _mixed(tmp / "load", n, exercises)
    js = tmp / "load.json"
    w, c, _o, _e = timed([*TAPETRACE, "grade", *[str(s) for s, _k in subs], "--only", ",".join(exercises),
                          "--device", "cpu", "--jobs", "2", "--timeout", str(timeout), "--json", str(js),
                          "--csv", str(tmp / "load.csv"), "--quiet"])
    rows = json.loads(js.read_text())
    complete = [r for r in rows if all(ex in r["exercises"] and r["exercises"][ex]["tests"] for ex in exercises)]
    honest = [r for r, (_s, k) in zip(rows, subs) if k in ("solution", "notebook")]
    kinds = sorted({k.split("-")[0] for _s, k in subs})
    print(f"\n[load] {n} mixed submissions ({', '.join(kinds)}), {len(exercises)} exercise(s), --jobs 2, "
          f"--timeout {timeout:g}; {load()}")
    line("rows in the JSON / submissions given", f"{len(rows)} / {n}")
    line("rows with every exercise graded", f"{len(complete)} / {n}")
    line("CSV rows", str(len((tmp / 'load.csv').read_text().splitlines()) - 1))
    require_score("[load] honest submissions with full marks", sum(r["total"] == r["max_total"] for r in honest))
    line("honest submissions with full marks", f"{sum(r['total'] == r['max_total'] for r in honest)} / {len(honest)}")
    line("time", f"{w:6.1f} s wall, {c:6.1f} s CPU, {3600 * n / w:.0f} submissions/hour")
    return {"n": n, "rows": len(rows), "complete": len(complete), "wall": w,
            "honest_full": sum(r["total"] == r["max_total"] for r in honest), "honest": len(honest)}


def bench_safety(tmp: Path, exercises: list[str], seed: int) -> dict[str, Any]:
    from zygote_safety import compare_launchers

    subs = [str(SOLUTIONS), str(EXERCISES_DIR)]
    rep = compare_launchers(subs, exercises, seed=seed)
    require_rows("[safety] probe answers recorded", range(rep["probe_calls"]))
    require_score("[safety] the solutions", rep["scores"].get(str(SOLUTIONS), 0.0))
    print(f"\n[safety] zygote-forked vs spawned workers, solutions + stubs, {len(exercises)} exercise(s); {load()}")
    line("probe answers compared (student and reference workers)", str(rep["probe_calls"]))
    line("probe answers that differ", str(len(rep["probe_mismatches"])))
    line("graded results that differ", str(len(rep["result_mismatches"])))
    z, s = rep["seconds"]["zygote"], rep["seconds"]["spawn"]
    line("grading time zygote / spawn", f"{z:.1f} s / {s:.1f} s = {z / s:.2f}x")
    return rep


def bench_cache(tmp: Path, exercises: list[str], seed: int) -> dict[str, Any]:
    """Student workers of JAX exercises: nothing lent vs the reference's compiled programs lent by key (shipped)."""
    import jax_cache_probe

    jax_ex = [ex for ex in exercises if jax_cache_probe.uses_jax(ex)]
    print(f"\n[cache] JAX persistent compilation cache, student workers of {', '.join(jax_ex) or 'no JAX exercise'}")
    if not jax_ex:
        return {}
    rep = jax_cache_probe.measure(jax_ex, seed=seed)
    line("cache key depends on the cache folder (jax default)", str(rep["key_depends_on_path"]))
    line("... with jax_persistent_cache_enable_xla_caches='none'", str(rep["key_depends_on_path_with_xla_caches_none"]))
    base = rep["modes"]["nothing lent (TAPETRACE_JAX_CACHE=off)"]
    for label, v in rep["modes"].items():
        line(f"{label}: 1st submission / 2nd (student side only)",
             f"{v['first']:6.1f} s / {v['second']:6.1f} s  = {base['first'] / v['first']:.2f}x / "
             f"{base['second'] / v['second']:.2f}x faster than nothing lent; {v['lent']} of {v['asked']} lent")
    return rep


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sections", default=",".join(SECTIONS))
    p.add_argument("--only", default="", help="exercises (default: every installed one)")
    p.add_argument("--quick", action="store_true", help="small counts (6 submissions, 40 in the load test)")
    p.add_argument("--n", type=int, default=None, help="submissions in the jobs benchmark (default 20)")
    p.add_argument("--load-n", type=int, default=None, help="submissions in the load test (default 200)")
    p.add_argument("--load-only", default=None, help="exercises for the load test (default: the first one)")
    p.add_argument("--class-n", type=int, default=None, help="submissions per class in the class section (default 8)")
    p.add_argument("--lone-n", type=int, default=None,
                   help="lone cold submissions in the class section, one seed each; the median is the figure (default 3)")
    p.add_argument("--scale-n", type=int, default=None, help="submissions in the scale section (default 8)")
    p.add_argument("--reps", type=int, default=2, help="repetitions of the iso benchmark (best is kept)")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--otter-zip", default=None, help="otter autograder zip (default: a stand-in bridge)")
    p.add_argument("--envelopes", default="768m:0.5",
                   help="Docker envelopes of the envelope section, MEM:CPUS,... (default: Gradescope's 768m:0.5)")
    p.add_argument("--json", default=None, help="write the numbers here")
    args = p.parse_args()
    sections = [s for s in args.sections.split(",") if s]
    bad = [s for s in sections if s not in SECTIONS]
    if bad:
        p.error(f"unknown sections {bad}; choose from {', '.join(SECTIONS)}")
    installed = available_exercises()
    exercises = [e for e in EXERCISES if e in installed and (SOLUTIONS / f"{e}.py").exists()]
    if args.only:
        want = [w.strip() for w in args.only.split(",")]
        exercises = [e for e in exercises if any(e == w or e.startswith(w + "_") for w in want)]
    n = args.n or (6 if args.quick else 20)
    load_n = args.load_n or (40 if args.quick else 200)
    load_ex = [e for e in exercises if e.startswith(tuple((args.load_only or exercises[0]).split(",")))]
    print(f"tapetrace benchmarks: {len(exercises)} exercise(s) installed with a solution: "
          f"{', '.join(e[:4] for e in exercises)}; {os.cpu_count()} CPUs; {load()}")
    require_rows(f"exercises installed with a solution matching --only {args.only!r}", exercises)
    results: dict[str, Any] = {"exercises": exercises, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="tapetrace-bench-") as t:
        tmp = Path(t)
        if "iso" in sections:
            results["iso"] = bench_iso(tmp, exercises, args.seed, args.reps)
        if "jobs" in sections or "perex" in sections:
            jobs = bench_jobs(tmp, exercises, args.seed, n)
            rows = jobs.pop("rows_jobs1")
            if "jobs" in sections:
                results["jobs"] = jobs
            if "perex" in sections:
                results["perex"] = bench_perex(rows, exercises)
        if "class" in sections:
            from classes import bench_class

            results["class"] = bench_class(tmp, exercises, args.seed, args.class_n or (4 if args.quick else 8),
                                           line, load, lone_n=args.lone_n or (1 if args.quick else 3))
        if "otter" in sections:
            results["otter"] = bench_otter(tmp, exercises, args.seed, args.otter_zip)
        if "load" in sections:
            results["load"] = bench_load_real(tmp, load_ex, load_n, timeout=5.0)
        if "safety" in sections:
            rep = bench_safety(tmp, exercises, args.seed)
            results["safety"] = {k: v for k, v in rep.items() if k != "scores"}
        if "cache" in sections:
            results["cache"] = bench_cache(tmp, exercises, args.seed)
        if "scale" in sections:
            from scale import bench_scale

            results["scale"] = bench_scale(tmp, exercises, args.seed, args.scale_n or (3 if args.quick else 8),
                                           line, load)
        if "envelope" in sections:
            from envelope import bench_envelope

            results["envelope"] = bench_envelope(tmp, exercises, args.seed, line, load,
                                                 [e for e in args.envelopes.split(",") if e])
    for name in sections:
        if name != "cache":  # cache: no JAX exercise among --only is said, not broken
            require_rows(f"[{name}] its numbers", results.get(name, {}))
    results["load_average_end"] = os.getloadavg()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
