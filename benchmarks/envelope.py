"""The ``envelope`` section of benchmarks/run.py: peak memory and wall time of a solutions submission per envelope.

Envelopes: this machine as it is, at ``--jobs 1`` and at the planned ``--jobs`` (autograder/workers/envelope.py),
and Docker containers limited like Gradescope's default (``--memory 768m --memory-swap 768m --cpus 0.5``)
and a little below it, down to the floor. Each row: the score, the statuses that are not ``graded``, the
wall time of the whole command, and the peak memory of the whole process tree: the cgroup's own peak
(``memory.peak`` / ``memory.max_usage_in_bytes``, page cache included) in a container, or in a child
cgroup made for the run on this machine where one can be made, else the most the process tree's PSS
summed to (sampled every 0.2 s). The containers are this machine's folders bound read-only with the
container's own /proc (benchmarks/hostimage.py, as in the container tests: nothing is pulled); without Docker they are
skipped, saying why. ``--below`` grades without the plan's refusal (to find the floor).

    .venv/bin/python benchmarks/envelope.py [--docker 768m:0.5,512m:0.5] [--below] [--only ex01,ex04]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hostimage import host_image  # noqa: E402

from autograder.core.paths import EXERCISES, SOLUTIONS  # noqa: E402
from autograder.workers import envelope as _envelope  # noqa: E402
from autograder.workers import sizing as _sizing  # noqa: E402

IMAGE = "tapetrace-envelope:bench"
GRADESCOPE = "768m:0.5"
# Grades with the plan's refusal switched off (its constants zeroed): where the floor is measured.
UNGUARDED = ("import sys; from autograder.workers import sizing as s; s.BASE_BYTES = s.REFERENCE_BYTES = 0; "
             "from autograder import cli; sys.exit(cli.main(sys.argv[1:]))")
PEAK = ("from autograder.workers import envelope as e; import json; c = e.current(); "
        "print('TAPETRACE-PEAK ' + json.dumps({'peak': e.memory_in_use(c)[1], 'oom': e.oom_kills(c)}))")


def _solutions(folder: Path, exercises: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for ex in exercises:
        shutil.copy(SOLUTIONS / f"{ex}.py", folder / f"{ex}.py")
    return folder


def _summary(out: Path) -> dict[str, Any]:
    try:
        res = json.loads(out.read_text())
    except (OSError, ValueError):
        return {"score": None}
    odd = {ex: e["status"] for ex, e in res["exercises"].items() if e["status"] != "graded"}
    lost = {ex: e["score"] for ex, e in res["exercises"].items() if e["score"] < e["max_score"]}
    return {"score": res["total"], "max": res["max_total"], "not_graded": odd, "lost": lost,
            "plan": res.get("envelope", {}).get("plan")}


# ------------------------------------------------------------------------------------ this machine
def _tree(pid: int) -> list[int]:
    from autograder.workers.watch import tree

    return tree(pid)


def _pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _child_cgroup() -> tuple[str, str] | None:
    """A fresh child of this process's memory cgroup (v1: where it can be made): ``(folder, peak file)``."""
    env = _envelope.current()
    if env.cgroup != "v1" or not env.memory_dir:
        return None
    folder = os.path.join(env.memory_dir, f"tapetrace-bench-{os.getpid()}")
    try:
        os.mkdir(folder)
    except OSError:
        return None
    return folder, os.path.join(folder, "memory.max_usage_in_bytes")


def measure_here(sub: Path, out: Path, jobs: int, exercises: list[str], seed: int) -> dict[str, Any]:
    """Grades ``sub`` on this machine; wall time and peak memory of the whole process tree."""
    cmd = [sys.executable, "-m", "autograder.cli", "grade", str(sub), "--only", ",".join(exercises), "--device",
           "cpu", "--seed", str(seed), "--jobs", str(jobs), "--json", str(out), "--quiet"]
    group = _child_cgroup()
    pre = None
    if group is not None:
        def pre() -> None:
            with open(os.path.join(group[0], "cgroup.procs"), "w") as fh:
                fh.write("0")
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, preexec_fn=pre, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "TAPETRACE_JAX_CACHE": "run"})
    peak_pss = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak_pss
        while not stop.is_set():
            peak_pss = max(peak_pss, sum(_pss_kib(p) for p in _tree(proc.pid)) * 1024)
            stop.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _out, err = proc.communicate()
    wall = time.monotonic() - t0
    stop.set()
    sampler.join()
    row = {"where": "this machine", "jobs": jobs, "wall_s": round(wall, 1), "rc": proc.returncode,
           "peak_pss": peak_pss, **_summary(out)}
    if group is not None:
        try:
            row["peak_cgroup"] = int(Path(group[1]).read_text())
        finally:
            os.rmdir(group[0])
    if proc.returncode not in (0, 3):
        row["stderr"] = err.decode(errors="replace")[-500:]
    return row


# ------------------------------------------------------------------------------------------ Docker
def docker_missing() -> str | None:
    """Why no container can be run here, or None."""
    if shutil.which("docker") is None:
        return "docker is needed (apt-get install docker.io; start dockerd)"
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        return "no Docker engine is running here (start dockerd)"
    return None


def ensure_image(tmp: Path) -> list[str]:
    """The image of this machine with the container's own /proc (``hostimage.host_image``: a chroot into this
    machine's ``/`` saw the host's PIDs); the `docker run` arguments that mount it."""
    (tmp / "image").mkdir(parents=True, exist_ok=True)
    return host_image(tmp / "image", IMAGE)


def measure_docker(sub: Path, outdir: Path, memory: str, cpus: str, jobs: int | None, exercises: list[str],
                   seed: int, below: bool = False, mounts: list[str] | None = None) -> dict[str, Any]:
    """Grades ``sub`` in ``docker run --memory M --memory-swap M --cpus C``; the container cgroup's peak."""
    name = f"tapetrace-env-{os.getpid()}-{memory}-{cpus}-{jobs}"
    out = outdir / f"{name}.json"
    grade = (f"{sys.executable} -c \"{UNGUARDED}\"" if below else f"{sys.executable} -m autograder.cli")
    script = (f"chmod o+x /root; cd {ROOT} && HOME=/tmp TAPETRACE_JAX_CACHE=run {grade} grade {sub} --only {','.join(exercises)} "
              f"--device cpu --seed {seed} {f'--jobs {jobs} ' if jobs else ''}--json {out} --quiet; echo rc=$?; "
              f"{sys.executable} -c \"{PEAK}\"")
    t0 = time.monotonic()
    done = subprocess.run(["docker", "run", "--rm", "--name", name, "--memory", memory, "--memory-swap", memory,
                           "--cpus", cpus, *(mounts or []), "-v", f"{outdir}:{outdir}",
                           "-v", f"{sub.parent}:{sub.parent}:ro", "-v", f"{ROOT}:{ROOT}:ro", IMAGE,
                           "/bin/sh", "-c", script], capture_output=True, text=True, timeout=3600)
    wall = time.monotonic() - t0
    row: dict[str, Any] = {"where": f"docker --memory {memory} --cpus {cpus}", "jobs": jobs or "planned",
                           "wall_s": round(wall, 1), **_summary(out)}
    for line in done.stdout.splitlines():
        if line.startswith("rc="):
            row["rc"] = int(line[3:])
        if line.startswith("TAPETRACE-PEAK "):
            got = json.loads(line.split(" ", 1)[1])
            row["peak_cgroup"], row["oom_kills"] = got["peak"], got["oom"]
    if row.get("rc") not in (0, 3):
        row["stderr"] = (done.stderr or done.stdout)[-500:]
    return row


def show(row: dict[str, Any], line: Any) -> None:
    peak = row.get("peak_cgroup") or row.get("peak_pss") or 0
    kind = "cgroup" if row.get("peak_cgroup") else "PSS"
    score = f"{row['score']:g}/{row['max']:g}" if row.get("score") is not None else f"no result (rc {row.get('rc')})"
    odd = f"; not graded: {row['not_graded']}" if row.get("not_graded") else ""
    lost = f"; lost: {row['lost']}" if row.get("lost") and not odd else ""
    line(f"{row['where']}, --jobs {row['jobs']}",
         f"{score}  {row['wall_s']:7.1f} s wall  peak {peak / 2**20:6.0f} MiB ({kind}){odd}{lost}")


def bench_envelope(tmp: Path, exercises: list[str], seed: int, line: Any, load: Any,
                   docker: list[str] | None = None, below: bool = False) -> dict[str, Any]:
    """The section: this machine at --jobs 1 and planned, then each Docker envelope (``MEM:CPUS``)."""
    env = _envelope.current()
    plan = _sizing.plan(env)
    print(f"\n[envelope] a solutions submission ({len(exercises)} exercises) per envelope; this machine: "
          f"{env.describe()}, plan --jobs {plan.jobs}; {load()}")
    sub = _solutions(tmp / "envelope" / "sub", exercises)
    outdir = tmp / "envelope" / "out"
    outdir.mkdir(parents=True, exist_ok=True)
    os.chmod(outdir, 0o777)
    rows = []
    for jobs in dict.fromkeys([1, plan.jobs]):
        rows.append(measure_here(sub, outdir / f"here-{jobs}.json", jobs, exercises, seed))
        show(rows[-1], line)
    missing = docker_missing()
    if missing:
        line("containers", f"skipped: {missing}")
        return {"rows": rows, "docker": missing}
    mounts = ensure_image(tmp)
    for spec in docker if docker is not None else [GRADESCOPE]:
        memory, cpus = spec.split(":")
        rows.append(measure_docker(sub, outdir, memory, cpus, None, exercises, seed, below=below,
                                   mounts=mounts))
        show(rows[-1], line)
    return {"rows": rows}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--docker", default=GRADESCOPE, help="containers, MEM:CPUS,... (default: Gradescope's 768m:0.5)")
    p.add_argument("--below", action="store_true", help="grade in the containers without the plan's refusal")
    p.add_argument("--only", default="", help="exercises (default: all)")
    p.add_argument("--seed", type=int, default=2026)
    args = p.parse_args()
    exercises = [e for e in EXERCISES if (SOLUTIONS / f"{e}.py").exists()
                 and (not args.only or any(e.startswith(w.strip()) for w in args.only.split(",")))]

    def line(label: str, value: str) -> None:
        print(f"  {label:<44} {value}", flush=True)

    with tempfile.TemporaryDirectory(prefix="tapetrace-envelope-", dir="/var/tmp") as t:
        os.chmod(t, 0o755)
        bench_envelope(Path(t), exercises, args.seed, line, lambda: f"load {os.getloadavg()[0]:.1f}",
                       [d for d in args.docker.split(",") if d], below=args.below)


if __name__ == "__main__":
    main()
