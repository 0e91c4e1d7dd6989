"""Manual overrides (autograder/reports/overrides.py) and handing results back (autograder/reports/handback.py):
the instructor's CSV parsed and checked (a bad row: exit 2 naming the file and the row), applied by ``report``,
``gradebook``, ``feedback`` and the receipt with the autograder's score kept beside, kept (and flagged) across
``regrade``, never read from a submission; one page per roster student with nothing of a classmate's, and the
zip Moodle's "Upload multiple feedback files in a zip" takes."""

from __future__ import annotations

import copy
import csv
import io
import json
import re
import zipfile
from collections.abc import Iterable
from pathlib import Path

import pytest
from test_report import fake_results

from autograder import cli
from autograder.core.paths import ROOT
from autograder.core.text import clean
from autograder.engine import regrade as _regrade
from autograder.reports import handback as _handback
from autograder.reports import overrides as _overrides

HEADER = "student,exercise,test,action,points,comment,by,at\n"
EX, TEST = "ex01_torch_mlp", "forward_matches_reference"  # 3 points in test_report.CHECKS; the exercise 10
NAMES = {"alice": ("s001", "Alice Liddell", "101"), "bob": ("s002", "Roberto Bolaño", "102"),
         "carol": ("s003", "Carol_Ann Smith", "103")}


def _results(tmp_path: Path) -> list[dict]:
    """Three students, every exercise graded, ``forward_matches_reference`` failed by all (0/3)."""
    return graded_class(tmp_path, NAMES, seed=2)


def graded_class(tmp_path: Path, names: Iterable[str], seed: int) -> list[dict]:
    """One row per folder name (``tmp_path/subs/NAME``, a notebook in each), every exercise graded, ``TEST``
    failed by all."""
    rows = fake_results(len(names), seed=seed)
    subs = tmp_path / "subs"
    subs.mkdir()
    for r, name in zip(rows, names, strict=True):
        (subs / name).mkdir()
        (subs / name / "work.ipynb").write_text("{}")
        r["submission"] = str(subs / name)
        for e in r["exercises"].values():
            e["status"], e["message"] = "graded", ""
            for t in e["tests"]:
                if t["name"] == TEST:
                    t.update(score=0.0, passed=False, code="MISMATCH")
            e["score"] = sum(t["score"] for t in e["tests"])
        r["total"] = sum(e["score"] for e in r["exercises"].values())
    return rows


def _write(tmp_path: Path, rows: list[dict], text: str) -> tuple[str, str]:
    res = tmp_path / "results.json"
    res.write_text(json.dumps(rows))
    ov = tmp_path / "overrides.csv"
    ov.write_text(text, encoding="utf-8")
    return str(res), str(ov)


def _roster(tmp_path: Path, ids: bool = True) -> str:
    p = tmp_path / "roster.csv"
    p.write_text("file,student_id,name,participant_id\n" + "".join(
        f"{k},{sid},{name},{pid if ids or k != 'bob' else ''}\n" for k, (sid, name, pid) in NAMES.items()),
        encoding="utf-8")
    return str(p)


def _table(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


# ----------------------------------------------------------------- parse, check
def test_good_rows_are_read_in_order_blank_rows_skipped(tmp_path):
    _, ov = _write(tmp_path, [], "\ufeff" + HEADER + f"alice,{EX},{TEST},set,3,regrade request,ana,2026-12-03T10:00:00+01:00\n"
                   ",,,,,,,\n" + f"s002,{EX},,adjust,-1.5,,luis,2026-12-04\n")
    ovs = _overrides.read(ov)
    assert [(o.row, o.student, o.test, o.action, o.points) for o in ovs.rows] == \
        [(2, "alice", TEST, "set", 3.0), (4, "s002", "", "adjust", -1.5)]


@pytest.mark.parametrize(("line", "why"), [
    (f"s001,{EX},{TEST},bump,3,,ana,2026-12-03", "neither set nor adjust"),
    (f"s001,{EX},{TEST},set,ten,,ana,2026-12-03", "is not a number"),
    (f"s001,{EX},{TEST},set,nan,,ana,2026-12-03", "is not a number"),
    (f"s001,{EX},{TEST},set,3,,,2026-12-03", "by is empty"),
    (f"s001,{EX},{TEST},set,3,,ana,yesterday", "not an ISO 8601 time"),
    (f"s009,{EX},{TEST},set,3,,ana,2026-12-03", "is no student_id of the roster"),
    (f"alice,{EX},{TEST},set,3,,ana,2026-12-03", "is no student_id of the roster"),  # a file name is no identity
    ("s001,ex99_nothing,,set,3,,ana,2026-12-03", "is not in s001's results"),
    (f"s001,{EX},no_such_check,set,1,,ana,2026-12-03", "is not a test of"),
    (f"s001,{EX},{TEST},set,4,,ana,2026-12-03", "beyond the maximum 3"),
    (f"s001,{EX},{TEST},set,-1,,ana,2026-12-03", "beyond the maximum 3"),
    (f"s001,{EX},,adjust,-11,,ana,2026-12-03", "beyond the maximum 10"),
    (f"s001,{EX},,set,3,\"never closed,ana,2026-12-03", "an unterminated quote (a quoted cell of the row starting "
                                                        "on line 3 never closes)"),
])
def test_each_kind_of_bad_row_is_refused_naming_the_file_and_row(tmp_path, capsys, line, why):
    res, ov = _write(tmp_path, _results(tmp_path), HEADER + f"s002,{EX},,adjust,1,ok,ana,2026-12-03\n{line}\n"
                     f"s003,{EX},,adjust,1,ok,ana,2026-12-03\n")
    roster = ["--roster", _roster(tmp_path)]
    for argv in (["gradebook", res, "--out", str(tmp_path / "g.csv"), *roster],
                 ["report", res, "--out", str(tmp_path / "r"), *roster],
                 ["feedback", res, *roster, "--out", str(tmp_path / "h")]):
        assert cli.main([*argv, "--overrides", ov]) == 2
        err = capsys.readouterr().err
        assert f"{ov}: row 3: " in err and why in err, err
    assert not (tmp_path / "g.csv").exists() and not (tmp_path / "h").exists()


def test_an_unclosed_quote_is_a_malformed_csv_at_its_row_never_an_empty_cell(tmp_path):
    """Issue 67, defect 5: the quote swallowed the rest of the file, and the row was reported as ``by is empty``."""
    _, ov = _write(tmp_path, [], HEADER + f"s001,{EX},,set,3,\"right idea,ana,2026-12-03\n"
                   f"s002,{EX},,set,3,fine,ana,2026-12-03\n")
    with pytest.raises(_overrides.OverrideError) as err:
        _overrides.read(ov)
    assert str(err.value).startswith(f"{ov}: row 2: is not a well-formed CSV: an unterminated quote")
    assert "line 2" in str(err.value) and "empty" not in str(err.value)
    # an opened quote that a later row's quote closes: a stray quote, named at the row it opened in
    Path(ov).write_text(HEADER + f"s001,{EX},,set,3,\"right idea,ana,2026-12-03\ns002,{EX},,set,3,\"ok\",ana,2026-12-03\n")
    with pytest.raises(_overrides.OverrideError, match=re.escape(f"{ov}: row 2: is not a well-formed CSV from line 2")):
        _overrides.read(ov)
    # a quoted comment over two lines is one well-formed cell: the next row keeps its number
    Path(ov).write_text(HEADER + f"s001,{EX},,set,3,\"two\nlines\",ana,2026-12-03\ns002,{EX},,set,1,,ana,2026-12-03\n")
    assert [(o.row, o.comment) for o in _overrides.read(ov).rows] == [(2, "two lines"), (3, "")]


@pytest.mark.parametrize(("text", "why"), [("student,exercise,action,points,by\n", "row 1: has no column(s) at"),
                                           (HEADER.strip() + ",grade\n", "row 1: has unknown column(s) grade"),
                                           ("", "has no column(s)")])
def test_a_bad_header_is_refused(tmp_path, text, why):
    _, ov = _write(tmp_path, [], text)
    with pytest.raises(_overrides.OverrideError, match=re.escape(why)):
        _overrides.read(ov)


# ------------------------------------------------------------------ applied
def test_set_and_adjust_apply_to_copies_keeping_the_autograders_score(tmp_path):
    rows = _results(tmp_path)
    before = copy.deepcopy(rows)
    alice = rows[0]["submission"]  # no roster: the submission's path as the results hold it
    _, ov = _write(tmp_path, rows, HEADER + f"{alice},{EX},{TEST},set,3,fair,ana,2026-12-03\n"
                   f"{alice},{EX},,adjust,-1,style,luis,2026-12-04\n")
    adjusted, audit = _overrides.apply(rows, _overrides.read(ov))
    assert rows == before  # the grading results are not touched
    e0, e = rows[0]["exercises"][EX], adjusted[0]["exercises"][EX]
    assert e["score"] == pytest.approx(e0["score"] + 3 - 1)
    assert adjusted[0]["total"] == pytest.approx(rows[0]["total"] + 2)
    t = next(t for t in e["tests"] if t["name"] == TEST)
    assert t["score"] == 3 and t["passed"] is False  # the verdict stays the autograder's
    assert _overrides.words(t) == ["autograder 0/3 → 3/3 by ana (2026-12-03): fair"]
    # the exercise's line starts from the autograder's own score (the test's override has its own line)
    assert _overrides.words(e) == [f"autograder {e0['score']:g}/10 → {e0['score'] + 2:g}/10 by luis (2026-12-04): "
                                   "style"]
    assert [(a["row"], a["autograder"], a["before"], a["after"], a["flags"]) for a in audit] == \
        [(2, 0.0, 0.0, 3.0, []), (3, e0["score"], e0["score"] + 3, e0["score"] + 2, [])]


def test_overrides_reach_gradebook_report_feedback_and_receipt(tmp_path, capsys):
    rows = _results(tmp_path)
    auto = rows[0]["exercises"][EX]["score"]
    res, ov = _write(tmp_path, rows, HEADER + f"{rows[0]['submission']},{EX},,set,9,regrade request,ana,"
                     "2026-12-03T10:00:00Z\n")
    out = tmp_path / "grades.csv"
    assert cli.main(["gradebook", res, "--out", str(out), "--overrides", ov]) == 0
    table = _table(out.read_text())
    col, notes = table[0].index(f"tapetrace {EX}"), table[0].index("tapetrace notes")
    alice = next(r for r in table if r[2] == "alice")
    assert float(alice[col]) == 9
    assert alice[notes] == f"{EX}: autograder {auto:g}/10 → 9/10 by ana (2026-12-03): regrade request"
    rec = json.loads(Path(f"{out}.receipt.json").read_text())["receipt"]
    assert rec["overrides"]["applied"] == 1
    assert (rec["overrides"]["rows"][0]["autograder"], rec["overrides"]["rows"][0]["after"]) == (auto, 9.0)
    assert rec["statuses"]["graded"] == 3 * len(rows[0]["exercises"]) and not rec["anomalies"]

    report, fb = tmp_path / "report", tmp_path / "fb"
    assert cli.main(["report", res, "--out", str(report), "--overrides", ov, "--feedback", str(fb),
                     "--feedback-format", "both"]) == 0
    page = (report / "index.html").read_text()
    assert "Overrides (audit)" in page and "regrade request" in page
    assert f"{auto:g}/10</td><td class=n>9/10" in page
    audit = _table((report / "overrides.csv").read_text())
    assert float(audit[1][audit[0].index("autograder")]) == auto and float(audit[1][audit[0].index("after")]) == 9
    assert json.loads((report / "receipt.json").read_text())["receipt"]["overrides"]["applied"] == 1
    html_page, md = (fb / "alice.html").read_text(), (fb / "alice.md").read_text()
    words = f"autograder {auto:g}/10 → 9/10 by ana (2026-12-03): regrade request"
    assert words in html_page and words in md
    assert "9 / 10" in html_page and "override" not in (fb / "bob.html").read_text()


def test_regrade_keeps_overrides_and_flags_a_changed_check(tmp_path, monkeypatch, capsys):
    rows = _results(tmp_path)
    alice, bob = rows[0]["submission"], rows[1]["submission"]
    res, ov = _write(tmp_path, rows, "student,exercise,test,action,points,comment,by,at,basis\n"
                     f"{alice},{EX},{TEST},set,2,partial,ana,2026-12-03,0/3\n"
                     f"{bob},{EX},{TEST},set,2,partial,ana,2026-12-03,0/3\n")
    # the check was fixed and regraded: alice now passes it (3/3); bob's verdict did not move
    new = copy.deepcopy(rows)
    t = next(t for t in new[0]["exercises"][EX]["tests"] if t["name"] == TEST)
    t.update(score=3.0, passed=True, code="")
    new[0]["exercises"][EX]["score"] += 3
    new[0]["total"] += 3
    adjusted, audit = _overrides.apply(new, _overrides.read(ov))
    assert audit[0]["flags"] == [f"{_overrides.CHANGED} (was 0/3, now 3/3)"] and audit[0]["applied"]
    assert audit[1]["flags"] == []
    assert next(t for t in adjusted[0]["exercises"][EX]["tests"] if t["name"] == TEST)["score"] == 2  # still applied
    diff = {"tapetrace_regrade": 1, "moved": [], "checks_changed": {EX: [{"name": TEST, "what": "tolerance changed"}]}}
    _, audit = _overrides.apply(rows, _overrides.read(ov), regrade=diff)  # a hand-written row has no basis to compare
    assert all(f"{_overrides.CHANGED} ({TEST}: tolerance changed)" in a["flags"] for a in audit)

    # through the CLI: nothing left to grade again, the overrides are checked, kept and flagged in the diff
    Path(res).write_text(json.dumps(new))
    monkeypatch.setattr(_regrade, "plan", lambda old, *a, **k: _regrade.Plan(seed=7, exercises=list(old[0]["exercises"])))
    assert cli.main(["regrade", res, "--json", str(tmp_path / "new.json"), "--device", "cpu", "--overrides", ov]) == 0
    d = json.loads((tmp_path / "new.diff.json").read_text())
    assert [r["flags"] for r in d["overrides"]["rows"]] == [[f"{_overrides.CHANGED} (was 0/3, now 3/3)"], []]
    assert json.loads((tmp_path / "new.receipt.json").read_text())["receipt"]["overrides"]["flagged"] == 1
    assert "check changed since override" in capsys.readouterr().out
    assert json.loads((tmp_path / "new.json").read_text()) == new  # the results stay the autograder's
    Path(ov).write_text(HEADER + f"{alice},{EX},gone_check,set,1,,ana,2026-12-03\n")
    assert cli.main(["regrade", res, "--json", str(tmp_path / "n2.json"), "--device", "cpu", "--overrides", ov]) == 2
    assert "row 2: test 'gone_check'" in capsys.readouterr().err


def test_an_overrides_file_planted_in_a_submission_is_never_read(tmp_path, capsys):
    rows = _results(tmp_path)
    planted = Path(rows[2]["submission"]) / "overrides.csv"
    planted.write_text(HEADER + f"carol,{EX},,set,10,me,carol,2026-12-03\n")
    (Path(rows[2]["submission"]) / "tapetrace_overrides.csv").write_text(planted.read_text())
    res, _ = _write(tmp_path, rows, "")
    out = tmp_path / "g.csv"
    assert cli.main(["gradebook", res, "--out", str(out)]) == 0
    carol = next(r for r in _table(out.read_text()) if r[2] == "carol")
    assert float(carol[-1]) == rows[2]["total"] and "override" not in out.read_text()
    assert cli.main(["report", res, "--out", str(tmp_path / "r"), "--feedback", str(tmp_path / "fb")]) == 0
    assert "overrides" not in json.loads((tmp_path / "r" / "receipt.json").read_text())["receipt"]
    assert "autograder" not in (tmp_path / "fb" / "carol.html").read_text()
    for argv in (["gradebook", res, "--out", str(tmp_path / "g2.csv")], ["report", res, "--out", str(tmp_path / "r2")]):
        assert cli.main([*argv, "--overrides", str(planted)]) == 2  # even named on the command line
        assert "is inside the submission" in capsys.readouterr().err


def test_hostile_comments_are_inert_in_every_medium(tmp_path):
    rows = _results(tmp_path)
    hostile = "=HYPERLINK(\"http://x\") <script>alert(1)</script> [x](javascript:alert(1)) | **b**"
    res, ov = _write(tmp_path, rows, HEADER + f"{rows[0]['submission']},{EX},{TEST},set,1,"
                     f"\"{hostile.replace(chr(34), chr(34) * 2)}\","
                     "\"=cmd|' /C calc'!A0\",2026-12-03\n")
    assert cli.main(["gradebook", res, "--out", str(tmp_path / "g.csv"), "--overrides", ov]) == 0
    assert cli.main(["report", res, "--out", str(tmp_path / "r"), "--overrides", ov, "--feedback",
                     str(tmp_path / "fb"), "--feedback-format", "both"]) == 0
    audit = _table((tmp_path / "r" / "overrides.csv").read_text())
    for cell in [c for row in audit[1:] for c in row]:
        assert cell[:1] not in "=+-@" or cell[:1] == ""
    assert audit[1][audit[0].index("by")].startswith("'=")
    for page in (tmp_path / "r" / "index.html", tmp_path / "fb" / "alice.html"):
        text = page.read_text()
        assert "<script>" not in text and "&lt;script&gt;" in text
    md = (tmp_path / "fb" / "alice.md").read_text()
    assert "<script>" not in md and not re.search(r"(?<!\\)\]\(", md) and "\\| \\*\\*b" in md


# ------------------------------------------------------------------ hand back
def _files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file()}


def test_hand_back_writes_one_folder_per_roster_id_with_only_that_students_page(tmp_path, capsys):
    rows = _results(tmp_path)
    res, ov = _write(tmp_path, rows, HEADER + f"s001,{EX},{TEST},set,3,see me,ana,2026-12-03\n")
    out = tmp_path / "handback"
    assert cli.main(["feedback", res, "--roster", _roster(tmp_path), "--out", str(out), "--overrides", ov,
                     "--format", "both"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["s001", "s002", "s003"]
    hidden = [ln.strip() for ln in (ROOT / "autograder" / "hidden" / f"{EX}.py").read_text().splitlines()
              if len(ln.strip()) > 24 and not ln.strip().startswith("#")]
    for key, (sid, name, _pid) in NAMES.items():
        files = _files(out / sid)
        assert sorted(files) == ["feedback.html", "feedback.md"]
        text = "\n".join(files.values())
        assert name.replace("_", "\\_") in text or name in text
        for other, (osid, oname, _) in NAMES.items():
            if other != key:
                assert not {other, osid, oname.split()[0], oname.split("_")[0]} & set(re.findall(r"\w+", text)), \
                    (key, other)
        assert not [ln for ln in hidden if ln in text]
    assert "autograder 0/3 → 3/3 by ana (2026-12-03): see me" in _files(out / "s001")["feedback.html"]


def test_the_moodle_zip_follows_moodles_import_pattern(tmp_path, capsys):
    rows = _results(tmp_path)
    res, _ = _write(tmp_path, rows, "")
    z = tmp_path / "feedback.zip"
    assert cli.main(["feedback", res, "--roster", _roster(tmp_path), "--out", str(tmp_path / "h"),
                     "--moodle-zip", str(z)]) == 0
    with zipfile.ZipFile(z) as zf:
        names = sorted(zf.namelist())
        assert names == ["Alice Liddell_101_assignfeedback_file_/feedback.html",
                         "Carol Ann Smith_103_assignfeedback_file_/feedback.html",
                         "Roberto Bolaño_102_assignfeedback_file_/feedback.html"]
        for n in names:  # as Moodle's importziplib.php reads a path part: explode('_', part, 5)
            info = n.split("/")[0].split("_", 4)
            assert len(info) >= 4 and info[1].isdigit() and (info[2], info[3]) == ("assignfeedback", "file")
        assert zf.read(names[0]).decode() == (tmp_path / "h" / "s001" / "feedback.html").read_text()
        assert "Roberto" not in zf.read(names[0]).decode()
    z.unlink()
    assert cli.main(["feedback", res, "--roster", _roster(tmp_path, ids=False), "--out", str(tmp_path / "h2"),
                     "--moodle-zip", str(z)]) == 3  # bob has no participant id: left out, said so
    assert "s002: no participant_id" in capsys.readouterr().err
    with zipfile.ZipFile(z) as zf:
        assert len(zf.namelist()) == 2 and (tmp_path / "h2" / "s002" / "feedback.html").exists()


def test_hand_back_refuses_a_submission_the_roster_does_not_name(tmp_path, capsys):
    rows = _results(tmp_path)
    res, _ = _write(tmp_path, rows, "")
    roster = tmp_path / "r.csv"
    roster.write_text("file,student_id\nalice,s001\nbob,s002\n")
    assert cli.main(["feedback", res, "--roster", str(roster), "--out", str(tmp_path / "h")]) == 2
    assert "carol" in capsys.readouterr().err and not (tmp_path / "h").exists()


# ------------------------------------------------------------------ identity (issue 64, class 1)
def test_a_key_is_a_roster_id_with_a_roster_and_a_path_without_never_a_file_name(tmp_path):
    rows = _results(tmp_path)
    roster = {"alice": {"file": "alice", "student_id": "s001"}, "bob": {"file": "bob", "student_id": "s002"},
              "carol": {"file": "carol", "student_id": "s003"}}
    alice = rows[0]["submission"]

    def hit(key: str, with_roster: bool) -> int | None:
        _, ov = _write(tmp_path, rows, HEADER + f"{key},{EX},,adjust,1,,ana,2026-12-03\n")
        return _overrides.resolve(_overrides.read(ov), rows, roster if with_roster else None)[0].index

    assert hit("s001", True) == 0 and hit(alice, False) == 0
    assert hit(alice + "/", False) == 0  # the same path, a trailing separator aside
    for key, with_roster, why in [("alice", True, _overrides.UNKNOWN_ID), (alice, True, _overrides.UNKNOWN_ID),
                                  ("alice", False, _overrides.UNKNOWN_PATH), ("s001", False, _overrides.UNKNOWN_PATH),
                                  ("subs/alice", False, _overrides.UNKNOWN_PATH)]:
        with pytest.raises(_overrides.OverrideError, match=re.escape(why.format(value=clean(key, 80)))):  # as shown
            hit(key, with_roster)
    # a results row graded from inside the folder holds a bare path: named ./alice, never alice
    rows[0]["submission"] = "alice"
    assert hit("./alice", False) == 0
    with pytest.raises(_overrides.OverrideError):
        hit("alice", False)


def test_a_roster_student_without_a_submission_or_with_two_is_listed_never_the_class(tmp_path, capsys):
    rows = _results(tmp_path)
    res, ov = _write(tmp_path, rows, HEADER + f"s004,{EX},,set,9,late work,ana,2026-12-03\n"
                     f"s001,{EX},{TEST},set,3,fair,ana,2026-12-03\n")
    roster = Path(_roster(tmp_path))
    roster.write_text(roster.read_text() + "dave,s004,Dave Absent,104\n")
    out = tmp_path / "report"
    assert cli.main(["report", res, "--out", str(out), "--roster", str(roster), "--overrides", ov]) == 3
    err = capsys.readouterr().err
    assert "override row 2 (s004 ex01_torch_mlp): not applied: student s004 has no submission" in err
    audit = _table((out / "overrides.csv").read_text())
    applied = audit[0].index("applied")
    assert [(r[1], r[2], r[applied]) for r in audit[1:]] == [("s004", "", "False"), ("s001", rows[0]["submission"],
                                                                                       "True")]
    assert cli.main(["gradebook", res, "--out", str(tmp_path / "g.csv"), "--roster", str(roster),
                     "--overrides", ov]) == 3
    assert "s004" in capsys.readouterr().err and (tmp_path / "g.csv").exists()
    assert cli.main(["feedback", res, "--roster", str(roster), "--out", str(tmp_path / "h"), "--overrides", ov]) == 3
    assert "fair" in (tmp_path / "h" / "s001" / "feedback.html").read_text()
    # two submissions of one student (the results of two runs): the override lands on neither; the class written
    twice = [*rows, {**copy.deepcopy(rows[0]), "submission": str(tmp_path / "late" / "alice")}]
    res2, _ = _write(tmp_path, twice, Path(ov).read_text())
    assert cli.main(["report", res2, "--out", str(tmp_path / "r2"), "--roster", str(roster), "--overrides", ov]) == 3
    assert "student s001 has 2 submissions" in capsys.readouterr().err
    assert (tmp_path / "r2" / "index.html").exists()
    _, aud = _overrides.apply(twice, _overrides.read(ov), _overrides_roster(roster))
    assert [a["applied"] for a in aud] == [False, False] and twice[0]["exercises"][EX]["score"] == \
        rows[0]["exercises"][EX]["score"]


def _overrides_roster(path: Path) -> dict:
    from autograder.reports.gradebook import read_roster

    return read_roster(str(path))


def test_regrade_takes_a_roster_for_its_overrides_and_not_alone(tmp_path, monkeypatch, capsys):
    rows = _results(tmp_path)
    res, ov = _write(tmp_path, rows, HEADER + f"s002,{EX},{TEST},set,2,partial,ana,2026-12-03\n")
    monkeypatch.setattr(_regrade, "plan", lambda old, *a, **k: _regrade.Plan(seed=7, exercises=list(old[0]["exercises"])))
    new = str(tmp_path / "new.json")
    assert cli.main(["regrade", res, "--json", new, "--device", "cpu", "--overrides", ov]) == 2
    assert "is no submission's path in the results" in capsys.readouterr().err
    assert cli.main(["regrade", res, "--json", new, "--device", "cpu", "--overrides", ov,
                     "--roster", _roster(tmp_path)]) == 0
    rec = json.loads((tmp_path / "new.receipt.json").read_text())["receipt"]["overrides"]
    assert [(r["student"], r["submission"], r["after"]) for r in rec["rows"]] == [("s002", rows[1]["submission"], 2.0)]
    assert cli.main(["regrade", res, "--json", new, "--device", "cpu", "--roster", _roster(tmp_path)]) == 2
    assert "--roster names the students of --overrides" in capsys.readouterr().err


def test_the_moodle_zip_never_files_two_students_under_one_participant(tmp_path, capsys):
    rows = _results(tmp_path)
    res, _ = _write(tmp_path, rows, "")
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student_id,name,participant_id\nalice,s001,Alice Liddell,101\n"
                      "bob,s002,Roberto Bolaño,101\ncarol,s003,Carol Smith,103\n")
    z = tmp_path / "feedback.zip"
    assert cli.main(["feedback", res, "--roster", str(roster), "--out", str(tmp_path / "h"),
                     "--moodle-zip", str(z)]) == 3
    err = capsys.readouterr().err
    assert "s001: participant_id 101 is also another roster student's" in err and "s002: participant_id 101" in err
    with zipfile.ZipFile(z) as zf:
        assert zf.namelist() == ["Carol Smith_103_assignfeedback_file_/feedback.html"]
    assert (tmp_path / "h" / "s001" / "feedback.html").exists() and (tmp_path / "h" / "s002" / "feedback.html").exists()


def test_hand_back_folders_of_ids_alike_but_for_case_are_hashed_and_said(tmp_path, capsys):
    rows = _results(tmp_path)
    res, _ = _write(tmp_path, rows, "")
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student_id,name\nalice,Ana,Ana Upper\nbob,ana,ana lower\ncarol,ana-2,Ana Two\n")
    out = tmp_path / "h"
    assert cli.main(["feedback", res, "--roster", str(roster), "--out", str(out)]) == 0
    names = sorted(p.name for p in out.iterdir())
    hashed = [n for n in names if n != "ana-2"]
    assert "Ana Two" in (out / "ana-2" / "feedback.html").read_text() and len(names) == 3
    assert [n[:4] for n in hashed] == ["Ana-", "ana-"] and all(re.fullmatch(r"\w+-[0-9a-f]{8}", n) for n in hashed)
    assert "Ana Upper" in (out / hashed[0] / "feedback.html").read_text()
    err = capsys.readouterr().err
    for n in hashed:
        assert f"its page is in {n}" in err
    assert _handback.id_folder("s1001") == "s1001" and _handback.id_folder("s1001.ipynb") == "s1001.ipynb"
    assert _handback.id_folder("x/s1001") != "s1001" and _handback.id_folder("..").startswith("student-")
