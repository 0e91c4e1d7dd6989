"""Gradebook export (autograder/_gradebook.py, ``tapetrace gradebook``): Canvas and Moodle CSVs, one column
per exercise and a total; students named by file name or a roster; the grader's rows left blank (fail closed)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from test_report import fake_results

from autograder import cli
from autograder.reports import gradebook as _gradebook


def _results():
    rows = fake_results(3, seed=2)
    for r, name in zip(rows, ("subs/alice.ipynb", "subs/bob.zip", "subs/carol/")):
        r["submission"] = name
    return rows


def _read(text):
    return list(csv.reader(io.StringIO(text)))


def test_student_key_from_file_names():
    assert [_gradebook.student_key(p) for p in ("subs/alice.ipynb", "b/bob.ZIP", "carol/", "x/dan.py", "eve")] == \
        ["alice", "bob", "carol", "dan", "eve"]


def test_canvas_columns_points_possible_and_totals():
    rows = _results()
    text, notes = _gradebook.to_csv(rows, "canvas")
    table = _read(text)
    exs = list(rows[0]["exercises"])
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *[f"tapetrace {e}" for e in exs],
                        "tapetrace total"]
    assert table[1][0] == "Points Possible"
    assert float(table[1][-1]) == pytest.approx(sum(rows[0]["exercises"][e]["max_score"] for e in exs))
    body = {r[2]: r for r in table[2:]}
    assert set(body) == {"alice", "bob", "carol"} and not notes
    for r in rows:
        line = body[_gradebook.student_key(r["submission"])]
        assert [float(x) for x in line[5:-1]] == [r["exercises"][e]["score"] for e in exs]
        assert float(line[-1]) == pytest.approx(r["total"])


def test_roster_names_students_and_moodle_uses_id_number_and_email(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student_id,name,email\nalice.ipynb,s001,Alice A,alice@uni.edu\nbob.zip,s002,Bob B,"
                      "bob@uni.edu\ncarol,s003,Carol C,carol@uni.edu\n")
    text, _ = _gradebook.to_csv(_results(), "moodle", _gradebook.read_roster(str(roster)))
    table = _read(text)
    assert table[0][:2] == ["ID number", "Email address"] and table[0][-1] == "tapetrace total"
    assert [r[:2] for r in table[1:]] == [["s001", "alice@uni.edu"], ["s002", "bob@uni.edu"], ["s003", "carol@uni.edu"]]
    canvas = _read(_gradebook.to_csv(_results(), "canvas", _gradebook.read_roster(str(roster)))[0])
    assert canvas[2][:4] == ["Alice A", "", "s001", "alice@uni.edu"]


def test_a_submission_not_in_the_roster_is_refused(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student_id\nalice.ipynb,s001\n")
    with pytest.raises(_gradebook.GradebookError, match="not in the roster"):
        _gradebook.to_csv(_results(), "canvas", _gradebook.read_roster(str(roster)))
    (tmp_path / "bad.csv").write_text("name,id\nx,y\n")
    with pytest.raises(_gradebook.GradebookError, match="file and student_id"):
        _gradebook.read_roster(str(tmp_path / "bad.csv"))


def test_the_graders_rows_are_blank_not_zero_and_exit_3(tmp_path, capsys):
    rows = _results()
    ex = next(iter(rows[1]["exercises"]))
    rows[1]["exercises"][ex].update(status="grader_error", score=0.0)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(rows))
    out = tmp_path / "grades.csv"
    assert cli.main(["gradebook", str(path), "--out", str(out)]) == 3
    assert "blank" in capsys.readouterr().err
    table = _read(out.read_text())
    bob = next(r for r in table if r[2] == "bob")
    assert bob[5] == "" and bob[-1] == ""  # no 0 the LMS would keep; no total either
    alice = next(r for r in table if r[2] == "alice")
    assert all(alice[5:])


def test_cli_writes_and_refuses_in_one_line(tmp_path, capsys):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_results()))
    assert cli.main(["gradebook", str(path), "--out", str(tmp_path / "g.csv"), "--format", "moodle"]) == 0
    assert _read((tmp_path / "g.csv").read_text())[0][0] == "ID number"
    capsys.readouterr()
    assert cli.main(["gradebook", str(tmp_path / "none.json"), "--out", str(tmp_path / "g.csv")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
