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


def _sample(at: float, cpu: float, waits: dict | None = None, cgroup: float | None = None) -> _watch.Sample:
    """A reading made up: ``waits`` maps a thread to ``(seconds waited for a CPU, lowered)``."""
    s = _watch.Sample.__new__(_watch.Sample)
    s.at, s.cpu, s.cgroup, s.cgroup_cpu = at, cpu, "/sys/fs/cgroup/tapetrace-1" if cgroup is not None else None, cgroup
    s.waits = {(1, t): (int(w * 1e9), low) for t, (w, low) in (waits or {}).items()}
    return s


def test_working_time_counts_cpu_and_sleep_not_waiting_for_a_cpu():
    w = _watch.working
    assert w(_sample(0, 0, {1: (0, False)}), _sample(10, 2, {1: (8, False)})) == pytest.approx(2.0)  # starved
    assert w(_sample(0, 0), _sample(10, 0)) == pytest.approx(10.0)  # asleep: all of it
    assert w(_sample(0, 0, {1: (0, False)}), _sample(10, 3, {1: (2, False)})) == pytest.approx(8.0)  # 3 CPU + 5
    assert w(_sample(0, 0), _sample(1, 2)) == pytest.approx(2.0)  # two threads busy: CPU counts in full


def test_a_starved_idle_thread_does_not_cancel_a_sleep():
    """The main thread sleeps 10 s beside a SCHED_IDLE (or reniced) spinner that waited 10 s for a CPU: the
    spinner chose to wait, so the 10 s are asleep; an ordinary thread's wait stays excused."""
    w = _watch.working
    before = _sample(0, 0, {1: (0, False), 2: (0, True)})
    assert w(before, _sample(10, 0.01, {1: (0, False), 2: (10, True)})) == pytest.approx(10.0)
    flipped = _sample(10, 0.01, {1: (0, False), 2: (10, False)})  # lowered at the first look: still its own
    assert w(before, flipped) == pytest.approx(10.0)
    lowered: set = set()
    _watch.interval(before, flipped, lowered)  # and once seen lowered, always
    later = _watch.interval(flipped, _sample(20, 0.02, {1: (0, False), 2: (20, False)}), lowered)
    assert sum(later) == pytest.approx(10.0)


def test_cpu_of_threads_and_children_that_ended_counts_from_the_cgroup():
    """Work relayed through threads or children that ended between two samples: the process tree saw none of
    it, the cgroup all of it (and none of it is also counted as asleep)."""
    cpu, asleep = _watch.interval(_sample(0, 1.0, cgroup=5.0), _sample(1, 1.0, cgroup=9.0))
    assert cpu == pytest.approx(4.0) and asleep < 0
    assert _watch.working(_sample(0, 1.0), _sample(1, 1.0)) == pytest.approx(1.0)  # no cgroup: wall at most


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


def _started(code: str) -> subprocess.Popen:
    """A Python process running ``code``, once it printed its first line (what it had to do first is done)."""
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def _stop(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait()


RENICED_WHOLE = """
import os, threading, time
os.nice(19)  # the whole process, before any of its threads start (as a submission can at import)
for _ in range(2):
    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
print("ready", flush=True)
time.sleep(600)
"""


def test_a_worker_that_reniced_itself_whole_does_not_move_the_base():
    """A worker that ran ``os.nice(19)`` at import and starts its threads after: each thread is lowered (its wait
    its own), since the base is the grader's own priority; the worker's, read per call, once was the base, and
    its starved spinners cancelled a 20 s sleep against a 4 s limit (9/10 where 2/10 was due, on the
    container level in a CPU cgroup of its own, as in Docker)."""
    proc = _started(RENICED_WHOLE)
    try:
        budget = _watch.Budget(proc.pid, 600.0, proc.kill)
        budget.step()
        seen = {key for key in budget._last.waits}
        assert len(seen) >= 3, seen
        assert seen <= budget._lowered
    finally:
        _stop(proc)


AUTOGROUP = """
import os, sys, threading, time
os.setsid()  # a session, so an autogroup, of its own (nice 0)
if sys.argv[1] != "0":
    with open("/proc/self/autogroup", "w") as fh:
        fh.write(sys.argv[1])
for _ in range(2):
    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
print("ready", flush=True)
time.sleep(600)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/autogroup"), reason="needs the scheduler's autogroups")
def test_a_raised_autogroup_is_a_lowered_priority():
    """Spinners in a session of their own whose autogroup nice was raised keep nice 0 and SCHED_OTHER, yet
    starve as a group: their waits are theirs (they once cancelled a 20 s sleep against a 4 s limit: 10/10
    where 2/10 was due, with namespaces and no Landlock). A fresh session's autogroup (nice 0) is ordinary."""
    base = _watch.own_priority()
    for nice, lowered in (("19", True), ("0", False)):
        proc = subprocess.Popen([sys.executable, "-c", AUTOGROUP, nice], stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            seen = _watch.waits(proc.pid, base)
            assert len(seen) >= 3 and {low for _w, low in seen.values()} == {lowered}, (nice, seen)
        finally:
            _stop(proc)


def test_a_context_cell_that_renices_the_whole_worker_excuses_no_wait():
    """In the worker, a notebook's context budget compares threads with the process's priority from before
    the notebook ran: after ``os.nice(19)`` in a cell, no thread's wait is excused (the main thread's own nice
    was the base, so a reniced process had every wait excused)."""
    script = textwrap.dedent("""
        import json, os, threading, time
        from autograder.submissions import execute as _exec
        os.nice(19)
        threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
        print(json.dumps(_exec._waits()))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {}


def test_the_graders_work_on_a_workers_frames_is_the_workers_time():
    """CPU the grader spent on what a worker sent (parsing its frames, serving its requests) is charged to the
    worker's budget, at once: a worker that kept a 30 MB request ahead of the grader (waiting for the grader,
    so never charged) once answered after 8 s against a 2.5 s limit (10/10; now 2/10, as a slow answer;
    ``tests/adversarial/attacks/flood_the_grader_with_requests.py``)."""
    asleep = subprocess.Popen(["sleep", "60"])
    try:
        budget = _watch.Budget(asleep.pid, 5.0, asleep.kill)
        budget.charge(3.0)
        assert not budget.expired
        budget.charge(2.5)
        assert budget.expired and asleep.wait(10) == -signal.SIGKILL
        budget.step()
        assert budget.used >= 5.5
    finally:
        _stop(asleep)


IDLE_SPINNER_BESIDE_SLEEP = """
import os, threading, time
def spin():
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # this thread only: it runs when nothing else does
    while True:
        pass
for _ in range(4):
    threading.Thread(target=spin, daemon=True).start()
time.sleep(12)
"""

# Work relayed through children that live less than a sample apart, four at a time while the parent works too;
# it stops (exit 0) once the tree used 5 CPU-s. Each process only ever saw its own share of the CPU.
RELAY = """
import os, time
def burn(s):
    t = time.process_time()
    while time.process_time() - t < s:
        pass
kids = set()
while sum(os.times()[:4]) < 5.0:
    while len(kids) < 4:
        pid = os.fork()
        if pid == 0:
            burn(0.005)
            os._exit(0)
        kids.add(pid)
    burn(0.01)
    for k in list(kids):
        if os.waitpid(k, os.WNOHANG)[0]:
            kids.discard(k)
"""


def test_an_idle_spinner_does_not_stretch_a_sleep():
    """A sleeping main thread beside SCHED_IDLE spinners, with hogs on its CPU (they starve, waiting for
    a CPU all along): the 12 s sleep still uses up the 5 working seconds (their waits once cancelled it: 1.3 to 3.4
    working seconds charged for the whole sleep)."""
    cpu = _cpu()
    with hogs(cpu, 2):
        proc = subprocess.Popen([sys.executable, "-c", IDLE_SPINNER_BESIDE_SLEEP], preexec_fn=_pin(cpu))
        budget = _watch.Budget(proc.pid, 5.0, proc.kill)
        _until_done(proc, budget)
    assert budget.expired and proc.returncode == -signal.SIGKILL


def test_work_relayed_through_short_lived_children_is_counted():
    """5 CPU-s through children that end between samples (the parent reaps them): stopped at the 2 working-s
    limit, without a cgroup too (what the processes reaped counts); they were once charged about 1.7."""
    cpu = _cpu()
    proc = subprocess.Popen([sys.executable, "-c", RELAY], preexec_fn=_pin(cpu))
    budget = _watch.Budget(proc.pid, 2.0, proc.kill)
    _until_done(proc, budget)
    assert budget.expired and proc.returncode == -signal.SIGKILL
    assert budget.accounting == "process tree"


HONEST_THREADS_AND_CHILDREN = """
import hashlib, os, threading, time
block = b"\\0" * (1 << 20)
def burn(s):
    t = time.process_time()  # the process's: both threads' CPU
    while time.process_time() - t < s:
        hashlib.sha256(block).digest()  # releases the GIL
threads = [threading.Thread(target=burn, args=(1.0,)) for _ in range(2)]
for th in threads:
    th.start()
for th in threads:
    th.join()
kids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        t = time.process_time()
        while time.process_time() - t < 0.2:
            pass
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
"""


@contextlib.contextmanager
def _cpu_cgroup() -> Iterator[str | None]:
    """A CPU-accounting cgroup named as the sandbox names its own (None where none can be made here)."""
    folder = None
    for parent in ("/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"):
        candidate = os.path.join(parent, f"tapetrace-{os.getpid()}")
        try:
            os.makedirs(candidate, exist_ok=True)
        except OSError:
            continue
        if _watch.cgroup_cpu(candidate) is not None:
            folder = candidate
            break
        os.rmdir(candidate)
    try:
        yield folder
    finally:
        if folder:
            os.rmdir(folder)


LEAVES_ITS_CGROUP = """
import os, sys, time
if sys.argv[2] != "stay":
    with open(os.path.join(sys.argv[2], "cgroup.procs"), "w") as fh:
        fh.write("0")  # out of the worker's cgroup, as root with cgroupfs writable (minimal) can
print("ready", flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("leaves", [True, False], ids=["leaves", "stays"])
def test_a_worker_that_leaves_its_cgroup_is_stopped(leaves):
    """Root without namespaces or Landlock (``minimal``) may write its pid into another cgroup's ``cgroup.procs``:
    out of its CPU, memory and process caps (it did, every one of them, graded at that level). A process of the
    worker seen outside its cgroup twice in a row stops the worker; one that stays is never stopped."""
    with _cpu_cgroup() as folder:
        if folder is None:
            pytest.skip("no cgroup can be made here")

        def enter() -> None:
            Path(folder, "cgroup.procs").write_text("0")

        proc = subprocess.Popen([sys.executable, "-c", LEAVES_ITS_CGROUP, folder,
                                 os.path.dirname(folder) if leaves else "stay"],
                                stdout=subprocess.PIPE, text=True, preexec_fn=enter)
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            budget = _watch.Budget(proc.pid, 600.0, proc.kill, cgroup=lambda: folder)
            budget.step()
            budget.step()
            assert budget.escaped is leaves and budget.expired is leaves
            assert (proc.wait(10) == -signal.SIGKILL) if leaves else proc.poll() is None
        finally:
            _stop(proc)


@pytest.mark.parametrize("cgroup", [True, False], ids=["cgroup", "process_tree"])
def test_honest_threads_and_children_beside_hogs_stay_within_budget(cgroup):
    """About 1.5 CPU-s in two threads working side by side, then in two children, on one CPU beside three hogs
    (several wall seconds): all of it counts, none of the waiting for the CPU, within a 4 s limit."""
    cpu = _cpu()
    with _cpu_cgroup() as folder, hogs(cpu):
        if cgroup and folder is None:
            pytest.skip("no cgroup can be made here")
        use = folder if cgroup else None

        def enter() -> None:
            os.sched_setaffinity(0, {cpu})
            if use:
                Path(use, "cgroup.procs").write_text("0")

        proc = subprocess.Popen([sys.executable, "-c", HONEST_THREADS_AND_CHILDREN], preexec_fn=enter)
        budget = _watch.Budget(proc.pid, 4.0, proc.kill, cgroup=lambda: use)
        _until_done(proc, budget)
    assert not budget.expired and proc.returncode == 0
    assert 1.0 < budget.used < 4.0, budget.used
    assert budget.accounting == ("cgroup" if cgroup else "process tree")


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


def test_a_context_statement_asleep_beside_idle_spinners_is_interrupted():
    """A context statement that sleeps 3 s beside SCHED_IDLE spinners, on a CPU with hogs: the sleep spends the
    1 s a statement may take (the spinners' waits once cancelled it, and the statement ran to its end)."""
    script = textwrap.dedent("""
        import json, os, threading, time
        from autograder.submissions import execute as _exec
        def spin():
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            while True:
                time.sleep(0)
        def nap():
            for _ in range(4):
                threading.Thread(target=spin, daemon=True).start()
            time.sleep(3)
            return 1
        ns = {"nap": nap}
        cells = [{"file": "<cell 1>", "source": "x = nap()\\n", "stmts": [[0, "other", ["x"], ["nap"]]]}]
        report = _exec.run_context(ns, cells, {"x"})
        print(json.dumps({"interrupted": report.interrupted, "x": ns.get("x")}))
    """)
    cpu = _cpu()
    with hogs(cpu, 2):
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                             preexec_fn=_pin(cpu), timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"interrupted": 1, "x": None}


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
