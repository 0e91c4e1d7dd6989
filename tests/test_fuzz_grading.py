"""Fuzzing one grading end to end (issue 53; docs/security.md#fuzzing): a class of two, A the solution and B
fuzzed notebook or ``.py`` bytes (tests/fuzzing.py), graded on ex01 in the session's run. B's bytes are the
student's: B's row is never ``grader_error``; a classmate's row (scores, statuses, each test's verdict) is the same
with and without B. A tiny derandomized budget in ``make test`` (each example is a grading)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import make_submission
from fuzzing import budget, notebook_bytes, py_bytes
from hypothesis import given
from hypothesis import strategies as st

EX = "ex01_torch_mlp"


def _verdict(row: dict[str, Any]) -> tuple:
    """What a row decides for a student: its total and, per exercise, status, score and each test's verdict."""
    return (row["total"], tuple(sorted((ex, e["status"], e["score"], tuple((t["name"], t["passed"], t["score"])
                                                                          for t in e["tests"]))
                                       for ex, e in row["exercises"].items())))


@pytest.fixture(scope="module")
def alone(run, tmp_path_factory) -> tuple[Path, tuple]:
    """A (the solution of ex01) and its row graded alone."""
    a = make_submission(tmp_path_factory.mktemp("fuzz-class") / "alice", only=[EX])
    (row,) = run.grade([str(a)], only=[EX])
    assert row["exercises"][EX]["status"] == "graded"
    return a, _verdict(row)


@budget(3)
@given(st.one_of(notebook_bytes().map(lambda b: ("work.ipynb", b)), py_bytes().map(lambda b: (f"{EX}.py", b))))
def test_fuzzed_classmate_changes_nothing_and_is_never_grader_error(run, alone, tmp_path_factory,
                                                                   named: tuple[str, bytes]) -> None:
    a, a_alone = alone
    b = tmp_path_factory.mktemp("fuzz-class") / "bob"
    b.mkdir()
    (b / named[0]).write_bytes(named[1])
    a_row, b_row = run.grade([str(a), str(b)], only=[EX], jobs=2)
    assert _verdict(a_row) == a_alone
    assert b_row["exercises"][EX]["status"] != "grader_error", b_row["exercises"][EX]
