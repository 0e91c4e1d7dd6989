"""Whose status it is: the grader's own trouble is never a student's grade (docs/grading-contract.md, "Statuses").

``grader_error`` and ``ungraded`` rows score 0 with a neutral message, send `tapetrace grade` to exit
status 3 with what to do, and are what ``--resume`` grades again (alone, merged into the earlier row);
an unreadable file is ``unreadable``, not ``missing``; ``--resume`` matches submissions by resolved
path and refuses to mix seeds or exercise sets in one file.
"""

from __future__ import annotations

import importlib.util
import json
import os
import zipfile
from pathlib import Path

import pytest
from conftest import SEED, make_submission

from autograder import cli
from autograder.core import status as _status
from autograder.core.i18n import render
from autograder.core.suite import GraderBug
from autograder.engine import resume as _resume
from autograder.engine.run import GradingRun

EX = "ex01_torch_mlp"
pytestmark = pytest.mark.skipif(importlib.util.find_spec(f"autograder.hidden.{EX}") is None,
                                reason="ex01's hidden suite is not installed")


def _row(path: str, statuses: dict[str, str], seed: int = SEED, level: str = "full") -> dict:
    exercises = {ex: {"score": 0.0 if st != "graded" else 10.0, "max_score": 10.0, "status": st,
                      "message": "", "tests": []} for ex, st in statuses.items()}
    return {"submission": path, "seed": seed, "exercises": exercises, "isolation": {"level": level},
            "total": sum(e["score"] for e in exercises.values()), "max_total": 10.0 * len(exercises)}


# ------------------------------------------------------------------ the plan of a resume
def test_resume_matches_a_submission_however_its_path_is_spelled(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    before = [_row("sub", {EX: "graded"})]
    for spelling in ("sub", "./sub", "sub/", str(tmp_path / "sub"), str(tmp_path / "x" / ".." / "sub")):
        plan = _resume.plan(before, [spelling], [EX], None)
        assert plan.paths == [] and plan.kept == 1, spelling
        assert plan.seed == SEED  # the earlier run's inputs


def test_resume_grades_only_the_graders_exercises_again():
    ex2 = "ex02_torch_training"
    before = [_row("/a", {EX: "graded", ex2: "grader_error"}), _row("/b", {EX: "ungraded", ex2: "crashed"}),
              _row("/c", {EX: "timeout", ex2: "graded"})]
    plan = _resume.plan(before, ["/a", "/b", "/c", "/d"], [EX, ex2], None)
    assert plan.paths == ["/a", "/b", "/d"]
    assert plan.exercises_for == {"/a": [ex2], "/b": [EX]}  # a student's timeout or crash stays as it was
    assert [r["submission"] for r in plan.before] == ["/c"]
    assert plan.kept == 1


def test_resume_refuses_another_seed_or_exercise_set():
    before = [_row("/a", {EX: "graded"})]
    with pytest.raises(_resume.ResumeRefused, match="seed"):
        _resume.plan(before, ["/a"], [EX], SEED + 1)
    with pytest.raises(_resume.ResumeRefused, match="other exercises"):
        _resume.plan(before, ["/a"], [EX, "ex02_torch_training"], None)
    with pytest.raises(_resume.ResumeRefused, match="mixes seeds"):
        _resume.plan([*before, _row("/b", {EX: "graded"}, seed=SEED + 1)], ["/a"], [EX], None)
    assert _resume.plan(before, ["/a"], [EX], SEED).kept == 1  # the same seed, said again, is fine


def test_a_merged_row_adds_up_and_keeps_the_weakest_isolation():
    ex2 = "ex02_torch_training"
    old = _row("sub", {EX: "graded", ex2: "grader_error"}, level="full")
    new = _row("/abs/sub", {ex2: "graded"}, level="container")
    row = _resume.merge(old, new, [EX, ex2])
    assert row["submission"] == "sub" and list(row["exercises"]) == [EX, ex2]
    assert row["total"] == 20.0 and row["max_total"] == 20.0
    assert row["isolation"]["level"] == "container"
    assert _resume.merge(new | {"submission": "sub"}, old, [EX, ex2])["isolation"]["level"] == "container"


# ------------------------------------------------------------------ rows the grader owns
def test_a_grader_row_blames_nobody_and_keeps_the_reason_for_the_instructor():
    from autograder.engine.rows import exercise_checks

    row = _status.grader_row(exercise_checks(EX), "grader_error", "reference worker died: SIGKILL\x1b[2J", lang="en")
    assert row["status"] == "grader_error" and row["score"] == 0 and row["max_score"] == 10
    assert all(t["score"] == 0 and not t["passed"] for t in row["tests"])
    assert "not caused by your code" in row["message"]
    for word in ("os._exit", "your code raised", "look for"):
        assert word not in row["message"]
    assert row["grader_reason"].startswith("reference worker died") and "\x1b" not in row["grader_reason"]
    es = _status.grader_row(exercise_checks(EX), "ungraded", "deadline", lang="es")
    assert es["message"] == render("NOT_GRADED_YET", "es")
    with pytest.raises(ValueError):
        _status.grader_row([], "crashed", "x", lang="en")


def test_a_check_that_crashes_makes_the_exercise_the_graders(monkeypatch, tmp_path):
    """A check's own bug (or the reference's) gives no verdict: the exercise is grader_error, 0 points."""
    from autograder import hidden

    real = hidden.load_suite

    def broken_suite(exercise):
        suite = real(exercise)
        check = suite.checks[-1]

        def crash(ctx):
            raise GraderBug("reference worker for ex01 died: killed by SIGKILL")

        monkeypatch.setattr(check, "fn", crash)
        return suite

    monkeypatch.setattr(hidden, "load_suite", broken_suite)
    run = GradingRun(device="cpu", timeout=60, seed=SEED, exercises=[EX])
    try:
        res = run.grade([str(make_submission(tmp_path / "s", only=[EX]))], only=[EX])[0]
    finally:
        run.close()
    e = res["exercises"][EX]
    assert e["status"] == "grader_error" and e["score"] == 0
    assert "SIGKILL" in e["grader_reason"] and "SIGKILL" not in e["message"]


# ------------------------------------------------------------------ through the command
def _grade(*argv: str, capsys) -> tuple[int, str]:
    code = cli.main(["grade", *argv, "--device", "cpu", "--only", EX])
    return code, capsys.readouterr().err


def test_grader_trouble_exits_3_and_resume_grades_it_again(tmp_path, capsys, monkeypatch):
    a = make_submission(tmp_path / "a", only=[EX])
    b = make_submission(tmp_path / "b", only=[EX])
    out = tmp_path / "g.json"
    real = GradingRun.grade_exercise

    def flaky(self, sub, exercise):
        if Path(sub.path).name == "b":
            raise OSError("No space left on device")
        return real(self, sub, exercise)

    monkeypatch.setattr(GradingRun, "grade_exercise", flaky)
    code, err = _grade(str(a), str(b), "--json", str(out), "--seed", str(SEED), "--quiet", capsys=capsys)
    assert code == _status.EXIT_NOT_ALL_GRADED
    assert "1 exercise(s) were not graded (grader_error 1)" in err and "--resume" in err
    assert "No space left on device" in err  # the reason, for the instructor
    rows = json.loads(out.read_text())
    assert rows[0]["total"] == 10 and rows[1]["exercises"][EX]["status"] == "grader_error"
    rows[0]["marker"] = "kept"
    out.write_text(json.dumps(rows))

    monkeypatch.setattr(GradingRun, "grade_exercise", real)
    # another spelling of the same submissions: matched by resolved path, nothing graded twice
    monkeypatch.chdir(tmp_path)
    code, err = _grade("./a", "b/", "--json", str(out), "--resume", capsys=capsys)
    assert code == 0, err
    assert "1 already graded" in err and "1 exercise(s) of 1 submission(s) to grade again" in err
    rows = json.loads(out.read_text())
    assert len(rows) == 2 and rows[0].get("marker") == "kept"
    assert rows[1]["exercises"][EX]["status"] == "graded" and rows[1]["total"] == 10
    assert {r["seed"] for r in rows} == {SEED}
    code, err = _grade("a", "--json", str(out), "--resume", "--seed", str(SEED + 1), capsys=capsys)
    assert code == 2 and "seed" in err


def test_an_unreadable_submission_is_unreadable_with_a_warning(tmp_path, capsys):
    bad_zip = tmp_path / "corrupt.zip"
    bad_zip.write_bytes(b"PK\x03\x04 this is not a zip")
    bad_nb = tmp_path / "nb.ipynb"
    bad_nb.write_text("{ not json")
    good = tmp_path / "fine.zip"
    with zipfile.ZipFile(good, "w") as zf:
        zf.writestr("sub/ex01_torch_mlp.py", "raise NotImplementedError\n")
    out = tmp_path / "g.json"
    code, err = _grade(str(bad_zip), str(bad_nb), str(good), "--json", str(out), "--quiet", capsys=capsys)
    assert code == 0, err
    rows = json.loads(out.read_text())
    assert [r["exercises"][EX]["status"] for r in rows[:2]] == ["unreadable", "unreadable"]
    assert rows[2]["exercises"][EX]["status"] != "unreadable"
    warnings = [line for line in err.splitlines() if line.startswith("tapetrace: warning:")]
    assert len(warnings) == 2 and os.path.basename(bad_zip) in warnings[0] and "unreadable" in warnings[1]
