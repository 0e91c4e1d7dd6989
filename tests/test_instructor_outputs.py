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
    """docs/grading-contract.md, "Statuses": ``missing`` is "no file" — true of an empty folder (it was read; nothing is in it), so
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
    data = json.loads((out / "r.json").read_text())  # one submission: one object (docs/grading-contract.md)
    assert (data[0] if isinstance(data, list) else data)["exercises"][EX]["status"] == "graded"
    assert (out / "csv" / "r.csv").read_text().startswith("submission")
    assert any((out / "fb").iterdir())


def test_an_output_folder_that_cannot_be_made_is_refused_before_grading(tmp_path, capsys):
    sub = make_submission(tmp_path / "s", only=[EX])
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    code, err = _grade(str(sub), "--json", str(blocker / "r.json"), capsys=capsys)
    assert code == 2 and "cannot create folder" in err


def test_a_declared_output_is_a_flag_hidden_from_workers_and_written_at_the_end(tmp_path, monkeypatch, capsys):
    """One entry added to ``GRADE_OUTPUTS`` (autograder/reports/outputs.py) is all a new output takes: it becomes
    an option of ``grade``, its path (and one derived from it) reaches the session's hide list, and its writer
    writes it at the end; one declared readable is left off the hide list."""
    from test_report import fake_results

    from autograder.engine import session as _session
    from autograder.reports import outputs as _outputs

    written: list[tuple[str, str, int]] = []

    def writer(name):
        return lambda w, path: written.append((name, path, len(w.results)))

    added = (_outputs.Output("marks", writer("marks"), flag="--marks", metavar="OUT.txt", help="a new output"),
             _outputs.Output("marks_log", writer("marks_log"), derived=("marks", lambda p: p + ".log")),
             _outputs.Output("open", writer("open"), flag="--open", metavar="OUT", help="public",
                             hidden_from_students=False))
    monkeypatch.setattr(_outputs, "GRADE_OUTPUTS", (*_outputs.GRADE_OUTPUTS, *added))
    given: dict[str, tuple] = {}

    def grade_batch(make_run, paths, only, *, add, outputs, **kw):
        given["outputs"] = outputs
        row = fake_results(1, seed=1)[0]
        add({**row, "submission": paths[0]})
        return _session.Outcome()

    monkeypatch.setattr(_session, "grade_batch", grade_batch)
    sub = make_submission(tmp_path / "s", only=[EX])
    marks, public = str(tmp_path / "m.txt"), str(tmp_path / "public.txt")
    assert "--marks OUT.txt" in _help(capsys)
    code, err = _grade(str(sub), "--marks", marks, "--open", public, "--csv", str(tmp_path / "r.csv"), capsys=capsys)
    assert code in (0, 3), err
    assert marks in given["outputs"] and marks + ".log" in given["outputs"]
    assert str(tmp_path / "r.csv") in given["outputs"] and public not in given["outputs"]
    assert written == [("marks", marks, 1), ("marks_log", marks + ".log", 1), ("open", public, 1)]
    assert (tmp_path / "r.csv").exists()


def _help(capsys) -> str:
    with pytest.raises(SystemExit):
        cli.main(["grade", "--help"])
    return capsys.readouterr().out


def _part(tmp_path, rows: list[dict]) -> str:
    """One shard part (1/1) holding ``rows``, as ``grade --shard 1/1`` writes it."""
    from autograder.scaleout import shard as _shard

    subs = [r["submission"] for r in rows]
    part = _shard.Shard(index=1, count=1, submissions=subs, paths=subs,
                        run={"seed": 7, "exercises": list(rows[0]["exercises"]), "public_only": False, "lang": "en",
                             "timeout": 30.0, "device": "cpu"})
    path = str(tmp_path / "part-1.json")
    part.write_json(rows, path)
    return path


@pytest.mark.parametrize("command", ["merge", "regrade"])
def test_merge_and_regrade_write_the_declared_outputs(command, tmp_path, monkeypatch):
    """``merge`` and ``regrade`` write their results through ``GRADE_OUTPUTS`` (issue 65): an output declared there
    (here one beside ``--json``) is written by them too, with every row; their JSON, CSV and receipt as before,
    their folders made as ``grade`` makes them (``merge`` refused a missing one)."""
    from test_report import fake_results

    from autograder.engine import regrade as _regrade
    from autograder.reports import outputs as _outputs

    written: list[tuple[str, int]] = []
    added = _outputs.Output("marks", lambda w, path: written.append((path, len(w.results))),
                            derived=("json", lambda p: p + ".marks"))
    monkeypatch.setattr(_outputs, "GRADE_OUTPUTS", (*_outputs.GRADE_OUTPUTS, added))
    rows = fake_results(3, seed=5)
    out, table = tmp_path / "out" / "all.json", tmp_path / "out" / "all.csv"
    if command == "merge":
        argv = ["merge", _part(tmp_path, rows)]
    else:  # nothing to grade again: the earlier rows are written anew
        monkeypatch.setattr(_regrade, "plan", lambda old, *a, **k: _regrade.Plan(seed=7, exercises=list(old[0]["exercises"])))
        (tmp_path / "old.json").write_text(json.dumps(rows))
        argv = ["regrade", str(tmp_path / "old.json"), "--device", "cpu"]
    assert cli.main([*argv, "--json", str(out), "--csv", str(table), "--quiet"]) == 0
    assert written == [(str(out) + ".marks", 3)]
    assert json.loads(out.read_text()) == rows and table.read_text().startswith("submission")
    rec = json.loads((tmp_path / "out" / "all.receipt.json").read_text())["receipt"]
    assert rec["submissions"] == 3


def test_the_commands_writing_outputs_borrow_no_private_helper():
    """What ``grade``, ``regrade`` and ``merge`` share about their outputs lives with the outputs, public
    (``regrade`` imported ``grade``'s ``_check_output``; the checks are :mod:`autograder.reports.outputs`')."""
    import ast
    from pathlib import Path

    from autograder.core.paths import ROOT

    borrowed = []
    for name in ("grade", "regrade", "merge"):
        path = ROOT / "autograder" / "cli" / f"{name}.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("autograder.cli."):
                borrowed += [f"{Path(path).name}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert borrowed == []
