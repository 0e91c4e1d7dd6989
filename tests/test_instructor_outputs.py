"""What the instructor reads after `tapetrace grade`: a warning for a submission in which nothing was
found, and output folders made the same way for every output option."""

from __future__ import annotations

import importlib.util
import json

import pytest
from conftest import make_submission

from autograder import cli

EX = "ex01_torch_mlp"
pytestmark = pytest.mark.skipif(importlib.util.find_spec(f"autograder.hidden.{EX}") is None,
                                reason="ex01's hidden suite is not installed")


def _grade(*argv: str, capsys) -> tuple[int, str]:
    code = cli.main(["grade", *argv, "--device", "cpu", "--only", EX, "--quiet"])
    return code, capsys.readouterr().err


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("tapetrace: warning:")]


def test_an_empty_folder_is_missing_with_a_warning(tmp_path, capsys):
    """GRADING.md: ``missing`` is "no file" — true of an empty folder (it was read; nothing is in it), so
    the row stays ``missing`` (``unreadable`` is for a file that cannot be read); the warning line tells
    it apart from a student who handed in other exercises."""
    empty = tmp_path / "empty"
    empty.mkdir()
    misnamed = tmp_path / "misnamed"
    misnamed.mkdir()
    (misnamed / "my_ex1.py").write_text("x = 1\n")
    tried = make_submission(tmp_path / "tried", only=[EX])
    out = tmp_path / "g.json"
    code, err = _grade(str(empty), str(misnamed), str(tried), "--json", str(out), capsys=capsys)
    assert code == 0, err
    rows = json.loads(out.read_text())
    assert [r["exercises"][EX]["status"] for r in rows] == ["missing", "missing", "graded"]
    warnings = _warnings(err)
    assert len(warnings) == 2, err
    assert str(empty) in warnings[0] and "an empty folder" in warnings[0] and "status missing" in warnings[0]
    assert str(misnamed) in warnings[1] and "my_ex1.py" in warnings[1]


def test_every_output_option_creates_its_folder(tmp_path, capsys):
    """``--json``/``--csv`` make their folder as ``--feedback`` does (they refused a missing one before)."""
    sub = make_submission(tmp_path / "s", only=[EX])
    out = tmp_path / "new" / "deeper"
    code, err = _grade(str(sub), "--json", str(out / "r.json"), "--csv", str(out / "csv" / "r.csv"),
                       "--feedback", str(out / "fb"), capsys=capsys)
    assert code == 0, err
    data = json.loads((out / "r.json").read_text())  # one submission: one object (GRADING.md)
    assert (data[0] if isinstance(data, list) else data)["exercises"][EX]["status"] == "graded"
    assert (out / "csv" / "r.csv").read_text().startswith("submission")
    assert any((out / "fb").iterdir())


def test_an_output_folder_that_cannot_be_made_is_refused_before_grading(tmp_path, capsys):
    sub = make_submission(tmp_path / "s", only=[EX])
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    code, err = _grade(str(sub), "--json", str(blocker / "r.json"), capsys=capsys)
    assert code == 2 and "cannot create folder" in err
