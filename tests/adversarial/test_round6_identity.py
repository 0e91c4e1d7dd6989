"""Round 6, class 1 (issue 64): a name a student chooses is never taken for an identity.

Overrides name a student by an identity key: with a roster, its ``student_id`` (the instructor's); without one,
the submission's path as the results hold it (the path the instructor gave ``tapetrace grade``). A submission
folder a student named after a classmate's roster id (``s1001``) is data: it never takes that classmate's
override (``report``, ``gradebook``, ``feedback``, ``regrade``) and never makes the class's run refuse. The
hand-back's folders are injective and never named like another student's id (case-only duplicates such as
``Ana``/``ana`` beside a real ``ana-2``). Each attack runs beside a harmless twin (the same class, the third
student's folder named ``mallory``) that was graded correctly before the fix; the attack broke out.
"""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from pathlib import Path

import pytest
from fuzzing import budget
from hypothesis import given
from hypothesis import strategies as st
from test_after_overrides import graded_class

from autograder import cli
from autograder.engine import regrade as _regrade
from autograder.reports import handback as _handback
from autograder.reports.feedback import feedback_names

EX, TEST = "ex01_torch_mlp", "forward_matches_reference"  # 3 points, failed (0/3) by every student here
HEADER = "student,exercise,test,action,points,comment,by,at\n"
OVERRIDE = HEADER + f"s1001,{EX},{TEST},set,3,see me,ta,2026-12-03\n"  # meant for Ana, roster id s1001
# folder -> (student_id, name, participant_id); the attacker named her folder after Ana's roster id
CLASSES = {"twin": {"ana": ("s1001", "Ana Real", "101"), "bob": ("s1002", "Bob Honest", "102"),
                    "mallory": ("s1003", "Mallory Sly", "103")},
           "attack": {"ana": ("s1001", "Ana Real", "101"), "bob": ("s1002", "Bob Honest", "102"),
                      "s1001": ("s1003", "Mallory Sly", "103")}}


def _class(tmp_path: Path, kind: str | dict, override: str = OVERRIDE, roster: dict | None = None) -> dict[str, str]:
    """The class's results, roster and overrides files; every exercise graded, ``TEST`` failed by all."""
    folders = CLASSES[kind] if isinstance(kind, str) else kind
    rows = graded_class(tmp_path, list(folders), seed=5)
    subs = tmp_path / "subs"
    (tmp_path / "results.json").write_text(json.dumps(rows))
    (tmp_path / "overrides.csv").write_text(override, encoding="utf-8")
    lines = [f"{f},{sid},{name},{pid}\n" for f, (sid, name, pid) in (roster or folders).items()]
    (tmp_path / "roster.csv").write_text("file,student_id,name,participant_id\n" + "".join(lines), encoding="utf-8")
    return {"res": str(tmp_path / "results.json"), "ov": str(tmp_path / "overrides.csv"),
            "roster": str(tmp_path / "roster.csv"), "ana": str(subs / "ana"),
            "third": str(subs / list(folders)[-1])}


def _main(argv: list[str]) -> int:
    """``tapetrace ARGV``'s exit status (an option the parser refuses: its status too)."""
    try:
        return cli.main(argv)
    except SystemExit as err:
        return int(err.code or 0)


def _report_pages(res: str, folder: Path) -> dict[str, str]:
    """``report --feedback``'s pages by submission path."""
    subs = [r["submission"] for r in json.loads(Path(res).read_text())]
    return {s: (folder / f"{stem}.html").read_text() for s, (stem, _t) in zip(subs, feedback_names(subs), strict=True)}


def _audit(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


# ------------------------------------------------------------------ report
@pytest.mark.parametrize("kind", ["twin", "attack"])
def test_report_with_a_roster_credits_the_roster_id_never_a_folder_of_that_name(tmp_path, kind):
    c = _class(tmp_path, kind)
    out, fb = tmp_path / "report", tmp_path / "fb"
    assert _main(["report", c["res"], "--out", str(out), "--roster", c["roster"], "--overrides", c["ov"],
                  "--feedback", str(fb)]) == 0  # before: the attack refused the whole class ("names two submissions")
    assert [(a["student"], a["submission"], a["applied"]) for a in _audit(out / "overrides.csv")] == \
        [("s1001", c["ana"], "True")]
    pages = _report_pages(c["res"], fb)
    assert "see me" in pages[c["ana"]] and "see me" not in pages[c["third"]]


@pytest.mark.parametrize("kind", ["twin", "attack"])
def test_report_without_a_roster_never_takes_a_bare_name_for_a_student(tmp_path, kind, capsys):
    c = _class(tmp_path, kind)
    out, fb = tmp_path / "report", tmp_path / "fb"
    # before: the attacker's folder s1001 took Ana's override (a stub 0 -> 3, in the report and her feedback)
    assert _main(["report", c["res"], "--out", str(out), "--overrides", c["ov"], "--feedback", str(fb)]) == 2
    assert "s1001" in capsys.readouterr().err
    assert not [p for p in (fb.glob("*.html") if fb.exists() else []) if "see me" in p.read_text()]
    # the instructor's own names for a submission without a roster: its path as the results hold it
    Path(c["ov"]).write_text(HEADER + f"{c['ana']},{EX},{TEST},set,3,see me,ta,2026-12-03\n")
    assert _main(["report", c["res"], "--out", str(out), "--overrides", c["ov"], "--feedback", str(fb)]) == 0
    pages = _report_pages(c["res"], fb)
    assert "see me" in pages[c["ana"]] and "see me" not in pages[c["third"]]


# ------------------------------------------------------------------ gradebook
def _gradebook_rows(path: Path) -> dict[str, dict[str, str]]:
    table = list(csv.reader(io.StringIO(path.read_text())))
    head = table[0]
    return {r[head.index("SIS User ID")]: dict(zip(head, r, strict=True)) for r in table[2:]}


@pytest.mark.parametrize("kind", ["twin", "attack"])
def test_gradebook_with_a_roster_credits_the_roster_id_and_writes_the_class(tmp_path, kind):
    c = _class(tmp_path, kind)
    out = tmp_path / "grades.csv"
    assert _main(["gradebook", c["res"], "--out", str(out), "--roster", c["roster"], "--overrides", c["ov"]]) == 0
    rows = _gradebook_rows(out)  # before: the attack refused the class (exit 2, no gradebook)
    assert "see me" in rows["s1001"]["tapetrace notes"] and "see me" not in rows["s1003"]["tapetrace notes"]
    rec = json.loads(Path(f"{out}.receipt.json").read_text())["receipt"]["overrides"]
    assert [r["submission"] for r in rec["rows"]] == [c["ana"]]


@pytest.mark.parametrize("kind", ["twin", "attack"])
def test_gradebook_without_a_roster_never_takes_a_bare_name_for_a_student(tmp_path, kind, capsys):
    c = _class(tmp_path, kind)
    out = tmp_path / "grades.csv"
    # before: the attacker's folder s1001 was "student s1001" and took Ana's override
    assert _main(["gradebook", c["res"], "--out", str(out), "--overrides", c["ov"]]) == 2
    assert "s1001" in capsys.readouterr().err and not out.exists()


# ------------------------------------------------------------------ feedback: hand-back and Moodle's zip
@pytest.mark.parametrize("kind", ["twin", "attack"])
def test_feedback_hands_the_override_to_the_roster_id_in_folders_and_zip(tmp_path, kind):
    c = _class(tmp_path, kind)
    out, z = tmp_path / "handback", tmp_path / "feedback.zip"
    assert _main(["feedback", c["res"], "--roster", c["roster"], "--out", str(out), "--overrides", c["ov"],
                  "--moodle-zip", str(z)]) == 0  # before: the attack refused the whole class
    assert sorted(p.name for p in out.iterdir()) == ["s1001", "s1002", "s1003"]
    ana, mallory = (out / "s1001" / "feedback.html").read_text(), (out / "s1003" / "feedback.html").read_text()
    assert "Ana Real" in ana and "see me" in ana and "Mallory" not in ana
    assert "Mallory Sly" in mallory and "see me" not in mallory
    with zipfile.ZipFile(z) as zf:
        assert "see me" in zf.read("Ana Real_101_assignfeedback_file_/feedback.html").decode()
        assert "see me" not in zf.read("Mallory Sly_103_assignfeedback_file_/feedback.html").decode()


@pytest.mark.parametrize("kind", ["twin", "attack"])
def test_a_roster_row_without_student_id_is_never_named_by_its_file(tmp_path, kind, capsys):
    """A roster row with an empty ``student_id``: its file name (which the student chose) is no identity."""
    roster = {"ana": ("s1001", "Ana Real", "101"), "bob": ("s1002", "Bob Honest", "102"),
              ("s1001" if kind == "attack" else "mallory"): ("", "Mallory Sly", "103")}
    c = _class(tmp_path, kind, roster=roster)
    out = tmp_path / "handback"
    # before: the attack refused the class ("both student s1001"); the twin put Mallory in a folder of her own
    assert _main(["feedback", c["res"], "--roster", c["roster"], "--out", str(out), "--overrides", c["ov"]]) in (0, 3)
    ana = (out / "s1001" / "feedback.html").read_text()
    assert "Ana Real" in ana and "see me" in ana and "Mallory" not in ana
    for page in out.rglob("feedback.html"):
        assert "Mallory" not in page.read_text() or "see me" not in page.read_text()


# ------------------------------------------------------------------ regrade --overrides
def _no_regrade(monkeypatch) -> None:
    """Nothing to grade again: the overrides are checked and audited against the earlier rows."""
    monkeypatch.setattr(_regrade, "plan", lambda old, *a, **k: _regrade.Plan(seed=7, exercises=list(old[0]["exercises"])))


@pytest.mark.parametrize("kind", ["twin", "attack"])
def test_regrade_without_a_roster_never_credits_a_folder_named_like_an_id(tmp_path, kind, monkeypatch, capsys):
    _no_regrade(monkeypatch)
    c = _class(tmp_path, kind)
    new = tmp_path / "new.json"
    # before: the attack credited Ana's override to the folder s1001 in the diff's audit and the receipt
    assert _main(["regrade", c["res"], "--json", str(new), "--device", "cpu", "--overrides", c["ov"]]) == 2
    assert "s1001" in capsys.readouterr().err and not new.exists()


@pytest.mark.parametrize("kind", ["twin", "attack"])
def test_regrade_with_a_roster_credits_the_roster_id(tmp_path, kind, monkeypatch):
    _no_regrade(monkeypatch)
    c = _class(tmp_path, kind)
    new = tmp_path / "new.json"
    assert _main(["regrade", c["res"], "--json", str(new), "--device", "cpu", "--overrides", c["ov"],
                  "--roster", c["roster"]]) == 0  # before: regrade had no --roster
    d = json.loads((tmp_path / "new.diff.json").read_text())
    assert [r["submission"] for r in d["overrides"]["rows"]] == [c["ana"]]
    rec = json.loads((tmp_path / "new.receipt.json").read_text())["receipt"]["overrides"]
    assert [r["submission"] for r in rec["rows"]] == [c["ana"]]


# ------------------------------------------------------------------ hand-back folder names
def _titles(out: Path) -> dict[str, str]:
    """Folder -> the name its page is titled with."""
    return {p.parent.name: re.search(r"<h1>[^:]*: ([^<]*)</h1>", p.read_text()).group(1)
            for p in out.glob("*/feedback.html")}


@pytest.mark.parametrize("kind", ["twin", "attack"])
def test_hand_back_folders_never_take_another_students_id(tmp_path, kind, capsys):
    ids = {"twin": ["Ana", "bea", "ana-2"], "attack": ["Ana", "ana", "ana-2"]}[kind]
    roster = {f: (sid, f"Student {sid}", str(101 + k)) for k, (f, sid) in
              enumerate(zip(["ana", "bob", "mallory"], ids, strict=True))}
    c = _class(tmp_path, roster, override=HEADER)
    out = tmp_path / "handback"
    assert _main(["feedback", c["res"], "--roster", c["roster"], "--out", str(out)]) in (0, 3)
    titles = _titles(out)
    # before: the attack put student ana's page in the folder ana-2, student ana-2's real id
    assert len({f.lower() for f in titles}) == len(titles) == 3
    for folder, title in titles.items():
        named = [sid for sid in ids if sid.lower() == folder.lower()]
        assert not named or named == [title.removeprefix("Student ")], (folder, title)


_PIECES = ["ana", "Ana", "ANA", "-2", "-3", "2", ".ipynb", ".py", "/", "\\", " ", "_", "-", ".", "..", "é"]


@budget(150)
@given(st.lists(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=3).map("".join), min_size=1, max_size=6,
                unique=True))
def test_hand_back_folder_names_are_injective_and_never_another_id(ids):
    folders, _notes = _handback.folders(ids)
    named = list(folders.values())
    assert len({f.lower() for f in named}) == len(named)  # one folder per student, on any file system
    for sid, folder in folders.items():
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", folder) and folder not in (".", "..")
        assert not [o for o in ids if o != sid and o.lower() == folder.lower()], (sid, folder)
