"""Never blame a student for the grader's trouble (docs/instructors/time-and-memory.md, "Whose trouble"),
nor let a student's own failure pass for the grader's.

An OOM kill caused by the container's memory (judged from the grader's own facts: tests/test_oom_rule.py),
the reference's worker dying mid-probe (SIGABRT), a worker that cannot start: the exercise is graded again, alone, and if the trouble stays it is ``grader_error`` with
the reason and the dead worker's stderr tail for the instructor, never the student's crash. A death that is
the student's (the same crash alone, a memory bomb beyond its cap) stays the student's. The run's deadline
writes complete results, marking what it could not grade ``ungraded``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import os
import shutil
import signal
import threading
from pathlib import Path

import pytest
from conftest import SEED

from autograder import cli
from autograder.core.i18n import render
from autograder.core.paths import SOLUTIONS
from autograder.engine import reference as _reference
from autograder.engine.run import GradingRun
from autograder.sandbox import pids_cgroup as _pids_cgroup
from autograder.workers import envelope as _envelope
from autograder.workers import intake as _intake
from autograder.workers import watch as _watch

EX, CANARY = "ex09_autograd_tape", "ex01_torch_mlp"
pytestmark = pytest.mark.skipif(importlib.util.find_spec(f"autograder.hidden.{EX}") is None,
                                reason="ex09's hidden suite is not installed")
STUDENT_CRASHES = ("LOAD_CRASHED", "CALL_CRASHED")


def _sub(tmp: Path, ex09: str | None = None) -> str:
    sub = tmp / "sub"
    sub.mkdir()
    (sub / f"{EX}.py").write_text(ex09 if ex09 is not None else (SOLUTIONS / f"{EX}.py").read_text())
    shutil.copy(SOLUTIONS / f"{CANARY}.py", sub / f"{CANARY}.py")
    return str(sub)


@pytest.fixture(scope="module")
def shared_run():
    """One run for the tests that do not change its references: its zygote and reference answers made once.
    A test that swaps its launcher puts the run's own back (``_swapped``). It is made for the two exercises
    its tests grade (EX and CANARY; EX1 is CANARY): its zygote imports no JAX and warms no Dynamo."""
    run = GradingRun(device="cpu", timeout=60, seed=SEED, exercises=[EX, CANARY])
    yield run
    run.close()


@contextlib.contextmanager
def _swapped(run: GradingRun, launcher):
    """``run`` starts its workers with ``launcher`` for a while."""
    own, run.launcher = run.launcher, launcher
    try:
        yield run
    finally:
        run.launcher = own


def _grade(sub: str, run: GradingRun | None = None) -> dict:
    """``sub`` graded (EX and CANARY) by ``run``, or by a run of its own when none is given."""
    if run is not None:
        return run.grade([sub], only=[EX, CANARY], jobs=2)[0]
    run = GradingRun(device="cpu", timeout=60, seed=SEED, exercises=[EX, CANARY])
    try:
        return run.grade([sub], only=[EX, CANARY], jobs=2)[0]
    finally:
        run.close()


def _assert_graders(row: dict, *words: str) -> None:
    """A grader_error row: neutral for the student, the reason for the instructor."""
    assert row["status"] == "grader_error" and row["score"] == 0, row
    neutral = render("GRADER_TROUBLE", "en")
    assert row["message"] == neutral and all(t["message"] == neutral for t in row["tests"])
    assert not any(t.get("code") in STUDENT_CRASHES for t in row["tests"])
    for w in words:
        assert w in row["grader_reason"] + "\n".join(row.get("instructor_log", [])), (w, row)


SLEEPS = "import time\ntime.sleep(1000)\n"


class _Launcher:
    """A seam around the run's launcher (its other attributes pass through)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.kind = inner.kind

    def __getattr__(self, name):
        return getattr(self.inner, name)


class _KillsStudents(_Launcher):
    """The OOM killer's part: SIGKILLs every student worker of EX a moment after it starts (while it loads)."""

    def spawn(self, spec, fds):
        proc = self.inner.spawn(spec, fds)
        if spec.get("role") == "student" and spec.get("exercise") == EX:
            def kill() -> None:
                for pid in reversed(_watch.tree(proc.pid)):  # the sandbox's inner process first
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)

            threading.Timer(1.0, kill).start()
        return proc


class _KillsTheStudentsProcess(_Launcher):
    """The OOM killer's part as the kernel plays it: SIGKILLs only the process that runs the student's code (the
    sandbox's inner one, the first of its pid namespace, where there is one) a moment after it starts."""

    def spawn(self, spec, fds):
        proc = self.inner.spawn(spec, fds)
        if spec.get("role") == "student" and spec.get("exercise") == EX:
            def kill() -> None:
                tree = _watch.tree(proc.pid)  # the worker, then its children: the inner one next
                with contextlib.suppress(OSError):
                    os.kill(tree[1] if len(tree) > 1 else tree[0], signal.SIGKILL)

            threading.Timer(1.0, kill).start()
        return proc


def _killed_while_loading(run: GradingRun, tmp: Path, launcher: type = _KillsStudents) -> dict:
    with _swapped(run, launcher(run.launcher)):
        return run.grade([_sub(tmp, SLEEPS)], only=[EX, CANARY], jobs=2)[0]


def _kernel_says(monkeypatch, own: dict[str, int] | None, accounting: str = "cgroup") -> None:
    """The seam for the kernel's facts the grader reads when a worker dies by SIGKILL: the container's and the
    machine's OOM-kill counter rises at every read; the worker's memory cgroup says ``own`` (``oom_kill``:
    processes in it the OOM killer took; ``at_cap``: times it reached its own cap); its sandbox's record
    says ``accounting`` (``cgroup``, or ``process`` where no memory cgroup could be made)."""
    counter = itertools.count(100)
    monkeypatch.setattr(_envelope, "oom_kills", lambda *_a, **_k: next(counter))
    monkeypatch.setattr(_pids_cgroup, "memory_events", lambda _folder: own)
    real = _intake.isolation

    def isolation(msg, kind="isolation"):
        out = real(msg, kind)
        out["isolation"]["memory_accounting"] = accounting
        return out

    monkeypatch.setattr(_intake, "isolation", isolation)


def test_a_worker_killed_by_the_oom_killer_is_the_graders(shared_run, tmp_path, monkeypatch):
    """SIGKILL while the kernel's OOM-kill counter rose and the OOM killer took a process of the worker's
    memory cgroup while it stayed under its own cap: the container's memory ran out. Both attempts die so:
    grader_error, never "the process died"."""
    _kernel_says(monkeypatch, {"oom_kill": 1, "at_cap": 0})
    res = _killed_while_loading(shared_run, tmp_path)
    row = res["exercises"][EX]
    _assert_graders(row, "OOM killer", "memory")
    assert row["instructor_log"][0].startswith("first attempt:")  # graded again, alone, first
    assert res["exercises"][CANARY]["score"] == res["exercises"][CANARY]["max_score"]


def test_the_oom_killers_kill_of_the_students_process_alone_is_seen_as_a_sigkill(shared_run, tmp_path, monkeypatch):
    """The kernel kills the process running the student's code, not the sandbox's outer one: the outer one's
    end mirrors a SIGKILL (it once exited 0: no handler may be set for SIGKILL), so the rule still applies."""
    _kernel_says(monkeypatch, {"oom_kill": 1, "at_cap": 0})
    row = _killed_while_loading(shared_run, tmp_path, _KillsTheStudentsProcess)["exercises"][EX]
    _assert_graders(row, "OOM killer", "memory")


def test_the_same_sigkill_without_an_oom_kill_is_the_students(shared_run, tmp_path, monkeypatch):
    monkeypatch.setattr(_envelope, "oom_kills", lambda *_a, **_k: 5)
    row = _killed_while_loading(shared_run, tmp_path)["exercises"][EX]
    assert row["status"] == "crashed" and row["tests"][0]["code"] == "LOAD_CRASHED", row
    assert "killed (signal 9)" in row["message"]


def test_a_kill_9_while_an_oom_kill_elsewhere_rose_the_counter_is_the_students(shared_run, tmp_path, monkeypatch):
    """The machine's counter rose (another worker's cgroup, another tenant), but no process of this worker's
    cgroup was the OOM killer's: its SIGKILL is a ``kill -9`` (its own, once it saw the counter rise), never
    the grader's trouble."""
    _kernel_says(monkeypatch, {"oom_kill": 0, "at_cap": 0})
    row = _killed_while_loading(shared_run, tmp_path)["exercises"][EX]
    assert row["status"] == "crashed" and row["tests"][0]["code"] == "LOAD_CRASHED", row


def test_a_worker_killed_at_its_own_memory_cap_is_the_students_memory_error(shared_run, tmp_path, monkeypatch):
    """Its cgroup reached its own cap (children or tmpfs together): a MemoryError, at once, not graded again."""
    _kernel_says(monkeypatch, {"oom_kill": 1, "at_cap": 3})
    row = _killed_while_loading(shared_run, tmp_path)["exercises"][EX]
    assert row["status"] == "error" and row["tests"][0]["code"] == "LOAD_MEMORY", row
    assert row["message"].startswith("MemoryError")
    assert not any(line.startswith("first attempt:") for line in row.get("instructor_log", [])), row
    assert any("own memory cgroup's cap" in line for line in row["instructor_log"]), row


def test_without_a_memory_cgroup_an_oom_kill_is_never_the_graders(shared_run, tmp_path, monkeypatch):
    """``memory_accounting: process`` (no writable cgroupfs, e.g. Docker's default): the student's processes
    together had no cap, so the OOM kill may be their doing: graded again alone, then the student's."""
    _kernel_says(monkeypatch, {"oom_kill": 1, "at_cap": 0}, accounting="process")
    row = _killed_while_loading(shared_run, tmp_path)["exercises"][EX]
    assert row["status"] == "crashed" and row["tests"][0]["code"] == "LOAD_CRASHED", row
    assert any("no memory cgroup" in line for line in row["instructor_log"]), row  # which rule judged it


ABORT_IN_REFERENCE = '''
import os as _os

_manual_grads = manual_grads


def manual_grads(*args, **kwargs):
    marker = {marker!r}
    if _os.path.exists(marker):
        if {once!r}:
            _os.unlink(marker)
        print("reference-side diagnostic before the abort", file=__import__("sys").stderr, flush=True)
        _os.abort()
    return _manual_grads(*args, **kwargs)
'''


def _aborting_reference(tmp: Path, monkeypatch, once: bool) -> None:
    """The seam: the run's reference solutions are a copy whose ex09 dies by SIGABRT in ``manual_grads``
    while a marker file exists (``once``: the first death removes it)."""
    solutions = tmp / "solutions"
    shutil.copytree(SOLUTIONS, solutions)
    marker = tmp / "abort-marker"
    marker.write_text("")
    with open(solutions / f"{EX}.py", "a") as fh:
        fh.write(ABORT_IN_REFERENCE.format(marker=str(marker), once=once))
    monkeypatch.setattr(_reference, "SOLUTIONS", solutions)


def test_a_reference_worker_that_keeps_aborting_is_grader_error_with_its_stderr(tmp_path, monkeypatch):
    _aborting_reference(tmp_path, monkeypatch, once=False)
    res = _grade(_sub(tmp_path))
    row = res["exercises"][EX]
    _assert_graders(row, "aborted (signal 6)", "reference-side diagnostic before the abort")
    assert res["exercises"][CANARY]["score"] == res["exercises"][CANARY]["max_score"]


def test_a_reference_worker_that_aborts_once_costs_nothing(tmp_path, monkeypatch):
    _aborting_reference(tmp_path, monkeypatch, once=True)
    row = _grade(_sub(tmp_path))["exercises"][EX]
    assert row["status"] == "graded" and row["score"] == row["max_score"], row


class _FailingStarts(_Launcher):
    """A launcher whose first ``n`` student workers of EX cannot start (then it starts them as usual)."""

    def __init__(self, inner, n: int) -> None:
        super().__init__(inner)
        self.left = n

    def spawn(self, spec, fds):
        if spec.get("role") == "student" and spec.get("exercise") == EX and self.left > 0:
            self.left -= 1
            raise OSError(11, "Resource temporarily unavailable (fork)")
        return self.inner.spawn(spec, fds)


@pytest.mark.parametrize("fails,status", [(1, "graded"), (10**6, "grader_error")])
def test_a_worker_that_cannot_start_is_retried_then_the_graders(shared_run, tmp_path, fails, status):
    with _swapped(shared_run, _FailingStarts(shared_run.launcher, fails)) as run:
        row = run.grade([_sub(tmp_path)], only=[EX], jobs=1)[0]["exercises"][EX]
    assert row["status"] == status, row
    if status == "graded":
        assert row["score"] == row["max_score"] and "no worker could start" in row["instructor_log"][0]
    else:
        _assert_graders(row, "no worker could start", "Resource temporarily unavailable")


def test_a_dead_students_stderr_goes_to_the_instructor_not_to_the_student(shared_run, tmp_path):
    code = "import os, sys\nprint('student-side diagnostic 42', file=sys.stderr, flush=True)\nos.abort()\n"
    row = _grade(_sub(tmp_path, code), shared_run)["exercises"][EX]
    # alone too: the student's (in a pid namespace abort() ends as SIGSEGV: the worker is its namespace's init)
    assert row["status"] == "crashed" and "(signal " in row["message"], row
    assert "student-side diagnostic 42" not in json.dumps(row["tests"]) + row["message"]
    log = "\n".join(row["instructor_log"])
    assert "first attempt" in log and "student-side diagnostic 42" in log and "Fatal Python error" in log


# ------------------------------------------------------------------------------------------ the deadline
def test_a_deadline_already_past_writes_every_row_as_ungraded(tmp_path, capsys):
    out = tmp_path / "r.json"
    code = cli.main(["grade", _sub(tmp_path), "--only", f"{EX},{CANARY}", "--device", "cpu", "--deadline", "1",
                     "--json", str(out), "--quiet"])
    assert code == 3
    res = json.loads(out.read_text())
    assert {e["status"] for e in res["exercises"].values()} == {"ungraded"}
    assert "deadline" in res["exercises"][EX]["grader_reason"]
    assert "not graded" in capsys.readouterr().err


def test_an_exercise_cut_by_the_deadline_is_ungraded_not_the_students(tmp_path):
    """A load that sleeps (within its 100 s) is stopped by the run's deadline: ungraded, not a crash or a timeout."""
    out = tmp_path / "r.json"
    code = cli.main(["grade", _sub(tmp_path, "import time\ntime.sleep(1000)\n"), "--only", EX, "--device", "cpu",
                     "--timeout", "100", "--deadline", "15", "--json", str(out), "--quiet"])
    row = json.loads(out.read_text())["exercises"][EX]
    assert code == 3 and row["status"] == "ungraded", row
    assert row["message"] == render("NOT_GRADED_YET", "en")


def test_the_timeout_is_in_working_seconds_so_a_sleep_still_times_out(tmp_path):
    """A hang that sleeps is caught by its working seconds (sleep counts), like an infinite loop: a top-level
    statement, so it is cut at its share of the load's limit, and with none of the exercise's names defined before
    it the load is a timeout (``LOAD_CUT_MISSING``)."""
    out = tmp_path / "r.json"
    cli.main(["grade", _sub(tmp_path, "import time\ntime.sleep(1000)\n"), "--only", EX, "--device", "cpu",
              "--timeout", "3", "--json", str(out), "--quiet"])
    row = json.loads(out.read_text())["exercises"][EX]
    assert row["status"] == "timeout" and row["tests"][0]["code"] == "LOAD_CUT_MISSING", row


def test_workers_go_to_the_oom_killer_before_the_grader_and_its_zygote(shared_run, tmp_path):
    """When the container's memory runs out, the kernel kills a worker (one exercise graded again), not the
    zygote (every later worker a fresh interpreter) or the grader (every result)."""
    sub = tmp_path / f"{EX}.py"
    shutil.copy(SOLUTIONS / f"{EX}.py", sub)
    got = {}
    for role, path in (("student", str(sub)), ("reference", str(SOLUTIONS / f"{EX}.py"))):
        worker = shared_run.start_worker(EX, path, role)
        got[role] = worker.call("__env__", {}, 60)["value"]["oom_score_adj"]
        worker.close()
    assert got == {"student": 1000, "reference": 500}
    with open("/proc/self/oom_score_adj") as fh:
        assert int(fh.read()) < 500  # the grader's own is untouched


# ------------------------------------------------------------------ whose a check's failure is (docs/security.md)
EX1 = "ex01_torch_mlp"
ONE_ROW = "_honest_forward = MLP.forward\nMLP.forward = lambda self, x: _honest_forward(self, x)[:1]\n"


def _ex01(tmp: Path, tail: str = "") -> str:
    sub = tmp / "sub"
    sub.mkdir()
    (sub / f"{EX1}.py").write_text((SOLUTIONS / f"{EX1}.py").read_text() + "\n\n" + tail)
    return str(sub)


def _forward_pair(ctx):
    from autograder.exercises.ex01_torch_mlp.public import random_case

    return ctx.both("forward", call="MLP.forward", **random_case(ctx))


def reads_every_row(ctx) -> None:
    """Crashes (IndexError) on an answer with fewer rows than the reference's: on the student's data only."""
    got, want = _forward_pair(ctx)
    for i in range(len(want)):
        assert got[i].shape == want[i].shape


def always_raises(ctx) -> None:
    """A broken check: it crashes whatever it gets, its text quoting what the student's side sent."""
    got, _ = _forward_pair(ctx)
    raise RuntimeError(f"STUDENT-TEXT {got.shape}")


def asks_for_no_probe(ctx) -> None:
    """A broken check on the student's side only: no worker has that probe (it says so, as a student can)."""
    ctx.student("no_such_probe", call="MLP.forward")


def _graded_with(run: GradingRun, monkeypatch, sub: str, *checks) -> dict:
    """``sub``'s ex01 graded by ``run`` with a suite of ``checks`` (1 point each) in place of its hidden suite
    (the run reads the suite at each grading; its reference answers do not depend on the suite)."""
    from autograder import hidden
    from autograder.core.suite import Suite

    suite, real = Suite(EX1), hidden.load_suite
    for fn in checks:
        suite.check(points=1)(fn)
    monkeypatch.setattr(hidden, "load_suite", lambda ex: suite if ex == EX1 else real(ex))
    return run.grade([sub], only=[EX1], jobs=1)[0]["exercises"][EX1]


def test_a_check_crashing_on_the_students_answer_is_the_students(shared_run, tmp_path, monkeypatch):
    """It passes with the reference standing in for the student: the crash came from the student's data."""
    row = _graded_with(shared_run, monkeypatch, _ex01(tmp_path, ONE_ROW), reads_every_row)
    assert row["status"] == "graded" and row["score"] == 0 and "grader_reason" not in row, row
    test = row["tests"][0]
    assert test["code"] == "CHECK_UNREADABLE" and test["message"] == render("CHECK_UNREADABLE", "en"), test
    assert "reads_every_row: failed with IndexError at tests/test_grader_trouble.py:" in row["instructor_log"][0]


def test_a_check_that_always_raises_is_the_graders_with_no_text_of_the_student(shared_run, tmp_path, monkeypatch):
    row = _graded_with(shared_run, monkeypatch, _ex01(tmp_path, ONE_ROW), always_raises, reads_every_row)
    _assert_graders(row, "always_raises", "RuntimeError", "tests/test_grader_trouble.py:", "in always_raises",
                    "first attempt:")
    assert "STUDENT-TEXT" not in json.dumps(row), row  # the exception's text may quote the student's data


def test_a_probe_no_worker_has_is_the_graders_though_the_students_worker_said_so(shared_run, tmp_path,
                                                                                 monkeypatch):
    """The student's worker says "no such probe" (kind internal, which a student can forge: PROBE_NO_ANSWER);
    with the reference standing in, the reference's worker says the same: the grader's."""
    row = _graded_with(shared_run, monkeypatch, _ex01(tmp_path), asks_for_no_probe)
    _assert_graders(row, "no_such_probe")


ABORT_IN_FORWARD = '''
import os as _os

_forward_before_abort = MLP.forward


def _aborting_forward(self, x):
    if _os.path.exists({marker!r}):
        print("fresh-reference diagnostic before the abort", file=__import__("sys").stderr, flush=True)
        _os.abort()
    return _forward_before_abort(self, x)


MLP.forward = _aborting_forward
'''


def test_the_stand_in_is_the_reference_run_again_fresh_and_its_death_is_the_graders(shared_run, tmp_path,
                                                                                    monkeypatch):
    """The crash is judged with the reference run again in a worker of its own (never the run's cached answers,
    which the check's ``ctx.reference`` still reads): when that worker dies (SIGABRT in ``MLP.forward`` once a
    marker exists, made after the cache was filled), the grader's, with its stderr for the instructor."""
    solutions = tmp_path / "solutions"
    shutil.copytree(SOLUTIONS, solutions)
    marker = tmp_path / "abort-marker"
    with open(solutions / f"{EX1}.py", "a") as fh:
        fh.write(ABORT_IN_FORWARD.format(marker=str(marker)))
    monkeypatch.setattr(_reference, "SOLUTIONS", solutions)
    for folder in ("honest", "one-row"):
        (tmp_path / folder).mkdir()
    honest = _graded_with(shared_run, monkeypatch, _ex01(tmp_path / "honest"), reads_every_row)
    assert honest["score"] == 1, honest  # the reference's answers cached, with no marker
    marker.write_text("")
    row = _graded_with(shared_run, monkeypatch, _ex01(tmp_path / "one-row", ONE_ROW), reads_every_row)
    _assert_graders(row, "reads_every_row", "run again fresh, died", "aborted (signal 6)",
                    "fresh-reference diagnostic before the abort")


def test_a_failed_response_the_grader_cannot_place_is_the_students_problem():
    from autograder.core.protocol import NO_ANSWER, probe_error
    from autograder.core.suite import GraderBug, StudentProblem
    from autograder.engine import whose

    for resp in ({"ok": False, "kind": "internal", "message": "probe failed: the grader's bug"},
                 {"ok": False, "kind": "grader"}, {"ok": False}):
        problem = probe_error(resp, "f(x)", 2**30)
        assert isinstance(problem, StudentProblem) and problem.key == NO_ANSWER, resp
        assert "grader's bug" not in problem.message("en")
        assert whose.needs_judging(problem)  # the grader checks its own side before it blames the student
    assert not whose.needs_judging(StudentProblem("CALL_EXCEPTION", call="f", error="E", where=""))
    assert not whose.needs_judging(GraderBug("the reference died"))
    assert whose.needs_judging(TypeError("'int' object is not subscriptable"))
