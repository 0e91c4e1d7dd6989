"""One set of row rules (``autograder.engine.assembly.RowAssembly``) for the local run, the Dask client and the
pytest entry: wanted, pending, graded again, finished, resumed (docs/grading-contract.md, "Assembling a
submission's row").

The rules are tested once, on the assembly itself (no worker, no grading); then one rule changed in one place
(:func:`assembly.finish`) is seen in the rows of all three drivers: the local run and the pytest entry grading the
ex01 solution, the Dask client's loop with tasks that finish at once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import make_submission

from autograder.core.paths import ROOT
from autograder.engine import assembly
from autograder.engine.assembly import Again, RowAssembly, RunFacts, TaskFacts

EX1, EX2, EX3 = "ex01_torch_mlp", "ex02_torch_training", "ex09_autograd_tape"
SEED = 11
CPU = {"torch": "cpu", "jax": "cpu"}
MARK = "changed in assembly.finish only"


def facts(device: dict[str, str] | None = None, level: str = "full") -> RunFacts:
    return RunFacts(device=dict(CPU if device is None else device), isolation={"level": level}, launcher="fork",
                    envelope=None, public_only=False)


def exercise_row(score: float, *, status: str = "graded", retry: str | None = None, log: list[str] | None = None):
    row = {"score": score, "max_score": 2.0, "status": status, "message": "", "tests": [], "seconds": 0.0}
    if retry:
        row["retry"] = retry
    if log:
        row["instructor_log"] = log
    return row


class Calls:
    def __init__(self) -> None:
        self.results: list[dict] = []
        self.tasks: list[tuple[int, str]] = []

    def kwargs(self) -> dict:
        return {"on_result": self.results.append, "on_task": lambda i, ex: self.tasks.append((i, ex))}


def test_wanted_is_the_runs_exercises_narrowed_by_resume():
    rows = RowAssembly(["a", "b", "c"], [EX3, EX1], seed=SEED, facts=facts, exercises_for={"b": [EX3], "c": []})
    assert rows.wanted == [[EX1, EX3], [EX3], []]  # the registry's order, whatever --only's


def test_a_row_is_finished_once_when_its_last_exercise_is_recorded():
    calls = Calls()
    rows = RowAssembly(["a", "b"], [EX1, EX3], seed=SEED, facts=facts, **calls.kwargs())
    rows.record(0, EX3, exercise_row(1.0))
    rows.record(1, EX1, exercise_row(2.0))
    assert calls.results == [] and calls.tasks == [(0, EX3), (1, EX1)]
    rows.record(0, EX1, exercise_row(2.0))
    assert [r["submission"] for r in calls.results] == ["a"]
    done = calls.results[0]
    assert list(done["exercises"]) == [EX1, EX3] and done["total"] == 3.0 and done["max_total"] == 4.0
    assert done["device"] == CPU and done["isolation"] == {"level": "full"} and done["launcher"] == "fork"
    assert all("fingerprint" in e for e in done["exercises"].values())
    out = rows.close()
    assert [r["submission"] for r in calls.results] == ["a"], "a row some exercise never reached is not handed on"
    assert [r["submission"] for r in out] == ["a", "b"]


def test_a_submission_with_nothing_to_grade_is_finished_at_close():
    calls = Calls()
    rows = RowAssembly(["a"], [EX1], seed=SEED, facts=facts, exercises_for={"a": []}, **calls.kwargs())
    assert calls.results == []
    assert rows.close() == calls.results and calls.results[0]["exercises"] == {}


def test_a_first_attempt_with_retry_is_graded_again_and_says_so():
    calls = Calls()
    rows = RowAssembly(["a", "b"], [EX1], seed=SEED, facts=facts, **calls.kwargs())
    assert rows.offer(1, EX1, exercise_row(0.0, status="grader_error", retry="the worker died (SIGKILL)"))
    assert rows.offer(0, EX1, exercise_row(0.0, retry="the reference: gone"))
    assert calls.tasks == [] and calls.results == [], "a first attempt with retry is not recorded"
    queued = rows.again()
    assert queued == [Again(0, EX1, "the reference: gone"), Again(1, EX1, "the worker died (SIGKILL)")]
    assert rows.again() == []
    rows.record_again(queued[1], exercise_row(2.0, log=["loading: worker died"]))
    assert calls.results[-1]["exercises"][EX1]["instructor_log"] == [
        "first attempt: the worker died (SIGKILL); graded again alone", "loading: worker died"]
    assert [r["submission"] for r in calls.results] == ["b"] and calls.tasks == [(1, EX1)]
    assert not rows.offer(0, EX1, exercise_row(2.0))  # without retry: recorded at once
    assert [r["submission"] for r in calls.results] == ["b", "a"]


def test_a_row_waits_for_the_device_and_keeps_its_weakest_isolation():
    calls = Calls()
    known: dict[str, str] = {}
    rows = RowAssembly(["a", "b"], [EX1, EX3], seed=SEED, facts=lambda: facts(known, "container"),
                       **calls.kwargs())
    rows.record(0, EX1, exercise_row(2.0))
    rows.record(0, EX3, exercise_row(2.0))
    assert calls.results == [], "finished before any worker said which device it graded on"
    rows.record(1, EX1, exercise_row(2.0), TaskFacts({"level": "full"}, CPU))
    rows.record(1, EX3, exercise_row(2.0), TaskFacts({"level": "minimal"}, CPU))
    assert [r["submission"] for r in calls.results] == ["b"]
    assert calls.results[0]["isolation"] == {"level": "minimal"} and calls.results[0]["device"] == CPU
    known.update(CPU)
    rows.close()
    assert [r["submission"] for r in calls.results] == ["b", "a"]
    assert calls.results[1]["isolation"] == {"level": "container"} and calls.results[1]["device"] == CPU


def test_a_resumed_submission_is_merged_into_its_earlier_row():
    calls = Calls()
    old = {"submission": "a", "seed": SEED, "device": CPU, "total": 2.0, "max_total": 4.0,
           "exercises": {EX1: exercise_row(2.0), EX3: exercise_row(0.0, status="ungraded")}}
    rows = RowAssembly(["a"], [EX1, EX3], seed=SEED, facts=facts, exercises_for={"a": [EX3]}, resumed={"a": old},
                       **calls.kwargs())
    rows.record(0, EX3, exercise_row(2.0))
    (done,) = calls.results
    assert list(done["exercises"]) == [EX1, EX3] and done["total"] == 4.0
    assert done["exercises"][EX3]["status"] == "graded" and rows.close() == [done]


# ------------------------------------------------------------------ one rule, three drivers
@pytest.fixture
def marked(monkeypatch):
    """:func:`assembly.finish` changed (one rule, in one place): every finished row carries :data:`MARK`."""
    real = assembly.finish

    def finish(row, *args, **kwargs):
        real(row, *args, **kwargs)
        row["rule"] = MARK

    monkeypatch.setattr(assembly, "finish", finish)


def _solved(row: dict) -> None:
    ex = row["exercises"][EX1]
    assert ex["status"] == "graded" and ex["score"] == ex["max_score"] > 0, ex


def test_one_rule_change_reaches_the_local_run(marked, tmp_path):
    from autograder.engine.run import GradingRun

    sub = make_submission(tmp_path / "s", only=[EX1])
    run = GradingRun(device="cpu", seed=SEED, exercises=[EX1])
    try:
        (row,) = run.grade([str(sub)], only=[EX1])
    finally:
        run.close()
    assert row["rule"] == MARK
    _solved(row)


def test_one_rule_change_reaches_the_cluster(marked, monkeypatch, tmp_path):
    """The Dask client's own loop (``ClusterRun.grade``) with tasks that finish at once (no scheduler: the rows
    are assembled on the client; a real ``--cluster local:N`` is tests/test_cluster.py's)."""
    pytest.importorskip("distributed", reason="Dask distributed is not installed (tapetrace[cluster])")
    from test_cluster_client import fake_run, graded

    sub = make_submission(tmp_path / "s", only=[EX1])
    run = fake_run(monkeypatch, lambda item, n: graded(item.exercise, {"level": "full"}))
    got: list[dict] = []
    (row,) = run.grade([str(sub)], only=[EX1], on_result=got.append)
    assert got == [row] and row["rule"] == MARK
    _solved(row)


PYTEST_WITH_RULE = """
import json, sys
import pytest
from autograder.engine import assembly
real = assembly.finish
def finish(row, *args, **kwargs):
    real(row, *args, **kwargs)
    row["rule"] = {mark!r}
assembly.finish = finish
class Probe:
    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session):
        row = session.config.pluginmanager.get_plugin("tapetrace-session").row
        with open({out!r}, "w") as fh:
            json.dump(row, fh)
sys.exit(pytest.main({args!r}, plugins=[Probe()]))
"""


def test_one_rule_change_reaches_the_pytest_entry(tmp_path):
    sub = make_submission(tmp_path / "s", only=[EX1])
    out = tmp_path / "row.json"
    args = ["-p", "autograder.pytest_plugin", f"--tapetrace-submission={sub}", "--tapetrace-seed", str(SEED),
            "--tapetrace-device", "cpu", "-k", EX1, "-q", "-p", "no:cacheprovider"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(ROOT)
    code = PYTEST_WITH_RULE.format(mark=MARK, out=str(out), args=args)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    row = json.loads(Path(out).read_text())
    assert row["rule"] == MARK and row["submission"] == str(sub) and list(row["exercises"]) == [EX1]
    _solved(row)
