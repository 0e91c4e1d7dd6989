"""Verdicts independent of load: time limits in working seconds (CPU time and sleep, not waiting for a CPU).

The grading runs here are pinned to one CPU, alone or beside CPU hogs pinned to the same CPU (each then
gets a fraction of it): a limit measured in wall-clock time would fail there what passes alone. No test
asserts how long anything takes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from autograder.core.paths import ROOT, SOLUTIONS
from autograder.workers import watch as _watch

HOG = "while True: pass"
pytestmark = pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs Linux CPU affinity")


def _cpu() -> int:
    """One CPU this process may run on (the last: the first is often the busiest)."""
    return max(os.sched_getaffinity(0))


def _pin(cpu: int):
    return lambda: os.sched_setaffinity(0, {cpu})


@contextlib.contextmanager
def hogs(cpu: int, n: int = 3) -> Iterator[list[subprocess.Popen]]:
    """``n`` busy processes pinned to ``cpu`` (killed, by pid, at the end)."""
    procs = [subprocess.Popen([sys.executable, "-c", HOG], preexec_fn=_pin(cpu)) for _ in range(n)]
    try:
        yield procs
    finally:
        for p in procs:
            p.kill()
            p.wait()


def test_working_time_counts_cpu_and_sleep_not_waiting_for_a_cpu():
    w = _watch.working
    assert w((0.0, 0.0, 0.0), (10.0, 2.0, 8.0)) == pytest.approx(2.0)  # starved: only its CPU
    assert w((0.0, 0.0, 0.0), (10.0, 0.0, 0.0)) == pytest.approx(10.0)  # asleep: all of it
    assert w((0.0, 0.0, 0.0), (10.0, 3.0, 2.0)) == pytest.approx(8.0)  # 3 CPU + 5 asleep
    assert w((0.0, 0.0, 0.0), (1.0, 2.0, 0.0)) == pytest.approx(2.0)  # two threads busy: CPU counts in full


def _burner(cpu_seconds: float) -> list[str]:
    return [sys.executable, "-c", f"import time\nwhile time.process_time() < {cpu_seconds}: pass"]


def _until_done(proc: subprocess.Popen, budget: _watch.Budget) -> None:
    with _watch.watching(budget):
        proc.wait()


def test_a_starved_process_is_not_out_of_time_but_a_sleeping_one_is():
    """1.5 CPU-s beside three hogs on its CPU take several wall seconds, and stay within 3 working seconds;
    a process asleep uses up 1 working second in about one second."""
    cpu = _cpu()
    with hogs(cpu):
        busy = subprocess.Popen(_burner(1.5), preexec_fn=_pin(cpu))
        budget = _watch.Budget(busy.pid, 3.0, busy.kill)
        _until_done(busy, budget)
    assert not budget.expired and busy.returncode == 0
    assert 1.0 < budget.used < 3.0
    asleep = subprocess.Popen(["sleep", "60"])
    nap = _watch.Budget(asleep.pid, 1.0, asleep.kill)
    _until_done(asleep, nap)
    assert nap.expired and asleep.returncode == -signal.SIGKILL


def test_a_notebooks_context_budget_is_in_working_seconds():
    """A context statement of 0.5 CPU-s (under the 1 s a statement may take) runs to its end beside hogs."""
    script = textwrap.dedent("""
        import json, time
        from autograder.submissions import execute as _exec
        def burn(s):
            t = time.process_time()
            while time.process_time() - t < s:
                pass
            return 1
        ns = {"burn": burn}
        cells = [{"file": "<cell 1>", "source": "x = burn(0.5)\\n", "stmts": [[0, "other", ["x"], ["burn"]]]}]
        report = _exec.run_context(ns, cells, {"x"})
        print(json.dumps({"ran": report.ran, "interrupted": report.interrupted, "x": ns.get("x")}))
    """)
    cpu = _cpu()

    def run() -> dict:
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                             preexec_fn=_pin(cpu), timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    alone = run()
    with hogs(cpu):
        loaded = run()
    assert alone == loaded == {"ran": 1, "interrupted": 0, "x": 1}


# A section that trains at the top level (as many notebooks do): ~1.5 CPU-s at import, under the 4 s limit alone.
TRAINS_AT_IMPORT = textwrap.dedent("""
    import time as _time
    _t = _time.process_time()
    while _time.process_time() - _t < 1.5:
        pass
""")


def _grade(sub: Path, out: Path, cpu: int) -> dict:
    cmd = [sys.executable, "-m", "autograder.cli", "grade", str(sub), "--only", "ex01,ex09", "--device", "cpu",
           "--seed", "7", "--timeout", "4", "--json", str(out), "--quiet"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, preexec_fn=_pin(cpu), timeout=1800,
                          env={**os.environ, "TAPETRACE_JAX_CACHE": "run"})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


def _verdicts(res: dict) -> dict:
    return {(ex, t["name"]): (e["status"], t["passed"], t["score"], t.get("code", ""))
            for ex, e in res["exercises"].items() for t in e["tests"]}


@pytest.mark.slow
def test_verdicts_are_the_same_alone_and_beside_cpu_hogs(tmp_path):
    """The same submission and seed, graded on one CPU alone and beside three CPU hogs: the same verdict for
    every check (with wall-clock limits, the import below timed out beside the hogs)."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "ex01_torch_mlp.py").write_text((SOLUTIONS / "ex01_torch_mlp.py").read_text() + TRAINS_AT_IMPORT)
    shutil.copy(SOLUTIONS / "ex09_autograd_tape.py", sub / "ex09_autograd_tape.py")
    cpu = _cpu()
    alone = _grade(sub, tmp_path / "alone.json", cpu)
    with hogs(cpu):
        t0 = time.monotonic()
        loaded = _grade(sub, tmp_path / "loaded.json", cpu)
        wall = time.monotonic() - t0
    assert alone["exercises"]["ex01_torch_mlp"]["status"] == "graded", alone["exercises"]["ex01_torch_mlp"]
    assert _verdicts(loaded) == _verdicts(alone), wall
    assert alone["total"] == alone["max_total"]
    assert loaded["envelope"]["cpus"] == 1 and loaded["envelope"]["plan"]["jobs"] == 1
