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
from pathlib import Path

import pytest
from test_report import fake_results

from autograder import cli
from autograder.core.paths import ROOT
from autograder.engine import regrade as _regrade
from autograder.reports import overrides as _overrides

HEADER = "student,exercise,test,action,points,comment,by,at\n"
EX, TEST = "ex01_torch_mlp", "forward_matches_reference"  # 3 points in test_report.CHECKS; the exercise 10
NAMES = {"alice": ("s001", "Alice Liddell", "101"), "bob": ("s002", "Roberto Bolaño", "102"),
         "carol": ("s003", "Carol_Ann Smith", "103")}


def _results(tmp_path: Path) -> list[dict]:
    """Three students, every exercise graded, ``forward_matches_reference`` failed by all (0/3)."""
    rows = fake_results(3, seed=2)
    subs = tmp_path / "subs"
    subs.mkdir()
    for r, name in zip(rows, NAMES, strict=True):
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
    (f"alice,{EX},{TEST},bump,3,,ana,2026-12-03", "neither set nor adjust"),
    (f"alice,{EX},{TEST},set,ten,,ana,2026-12-03", "is not a number"),
    (f"alice,{EX},{TEST},set,nan,,ana,2026-12-03", "is not a number"),
    (f"alice,{EX},{TEST},set,3,,,2026-12-03", "by is empty"),
    (f"alice,{EX},{TEST},set,3,,ana,yesterday", "not an ISO 8601 time"),
    (f"dave,{EX},{TEST},set,3,,ana,2026-12-03", "in none of the results"),
    ("alice,ex99_nothing,,set,3,,ana,2026-12-03", "is not in alice's results"),
    (f"alice,{EX},no_such_check,set,1,,ana,2026-12-03", "is not a test of"),
    (f"alice,{EX},{TEST},set,4,,ana,2026-12-03", "beyond the maximum 3"),
    (f"alice,{EX},{TEST},set,-1,,ana,2026-12-03", "beyond the maximum 3"),
    (f"alice,{EX},,adjust,-11,,ana,2026-12-03", "beyond the maximum 10"),
])
def test_each_kind_of_bad_row_is_refused_naming_the_file_and_row(tmp_path, capsys, line, why):
    res, ov = _write(tmp_path, _results(tmp_path), HEADER + f"bob,{EX},,adjust,1,ok,ana,2026-12-03\n{line}\n")
    for argv in (["gradebook", res, "--out", str(tmp_path / "g.csv")], ["report", res, "--out", str(tmp_path / "r")],
                 ["feedback", res, "--roster", _roster(tmp_path), "--out", str(tmp_path / "h")]):
        assert cli.main([*argv, "--overrides", ov]) == 2
        err = capsys.readouterr().err
        assert f"{ov}: row 3: " in err and why in err, err
    assert not (tmp_path / "g.csv").exists() and not (tmp_path / "h").exists()


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
    _, ov = _write(tmp_path, rows, HEADER + f"alice,{EX},{TEST},set,3,fair,ana,2026-12-03\n"
                   f"alice,{EX},,adjust,-1,style,luis,2026-12-04\n")
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
    res, ov = _write(tmp_path, rows, HEADER + f"alice,{EX},,set,9,regrade request,ana,2026-12-03T10:00:00Z\n")
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
    res, ov = _write(tmp_path, rows, "student,exercise,test,action,points,comment,by,at,basis\n"
                     f"alice,{EX},{TEST},set,2,partial,ana,2026-12-03,0/3\n"
                     f"bob,{EX},{TEST},set,2,partial,ana,2026-12-03,0/3\n")
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
    Path(ov).write_text(HEADER + f"alice,{EX},gone_check,set,1,,ana,2026-12-03\n")
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
    res, ov = _write(tmp_path, rows, HEADER + f"alice,{EX},{TEST},set,1,\"{hostile.replace(chr(34), chr(34) * 2)}\","
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
