"""Gradebook export: a CSV that Canvas or Moodle imports, one column per exercise and a total.

The student is named by the submission's file name (``alice.ipynb``, ``alice.zip``, the folder
``alice/``: ``alice``), or by a roster CSV mapping files to students (columns ``file`` and
``student_id``, optional ``name``, ``email``, ``section``; a ``file`` may be a path's tail such as
``alice/work.ipynb`` where every student's file has the same name). An exercise the grader could not
grade (``grader_error``, ``ungraded``) is left blank, never a 0: an LMS would keep the blank and the
instructor is told (fail closed). A submission missing from a given roster is refused, not guessed; a
roster student without a submission gets a blank row (``no submission``); two submissions of one
student are refused (without a roster, the message suggests one).

A late policy (:mod:`autograder.reports.late`) multiplies a late submission's scores and says so in the
``notes`` column; a student whose submission time is unknown is left blank (``time unknown``).

Canvas: the columns of its gradebook export (``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``,
``Section``, one per assignment) with a ``Points Possible`` row. Moodle: ``ID number`` (and ``Email
address`` when the roster has one), one column per grade item; map the identifier on import. The
``notes`` column (when there is a late policy or something to say) is for the instructor: ignore it on
import.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from autograder.core.records import ResultRow
from autograder.core.status import is_graders
from autograder.core.text import csv_cell
from autograder.reports import late as _late
from autograder.reports.overrides import notes_for
from autograder.reports.roster import GradebookError as GradebookError
from autograder.reports.roster import key_parts
from autograder.reports.roster import read_roster as read_roster
from autograder.reports.roster import roster_key as roster_key
from autograder.reports.roster import student_key as student_key

NO_SUBMISSION = "no submission"


@dataclass
class LateRules:
    """A late policy with the submission times and the extensions it applies."""

    policy: _late.Policy
    times: _late.Times | None = None
    extensions: dict[str, datetime] = field(default_factory=dict)


@dataclass
class Book:
    """A gradebook: the exercises, their maxima, one record per student, and what to tell the instructor.

    ``blanks`` are cells left blank that the instructor must resolve (exit status 3); ``notes`` are facts
    (no submission); ``late`` is the receipt's late section (None without a policy).
    """

    exercises: list[str]
    maxima: dict[str, float]
    students: list[dict[str, Any]]
    blanks: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    late: dict[str, Any] | None = None


def _who(r: ResultRow, roster: dict[str, dict[str, str]] | None) -> dict[str, str]:
    key = student_key(str(r["submission"]))
    who = {"student_id": key, "name": key, "email": "", "section": "", "key": key}
    if roster is not None:
        rk = roster_key(roster, str(r["submission"]))
        if rk is None:
            raise GradebookError(f"{r['submission']}: not in the roster (its file name {key!r} is no roster file)")
        who.update({k: v for k, v in roster[rk].items() if k in who and k != "key" and v})
        who["roster_key"] = rk
    return who


def _names(submission: str) -> tuple[str, ...]:
    """The names a submission's time and extension are looked up by: its path as given, then its components
    nearest the root first (the platform's ``submission_N/`` or the instructor's folder before any name the
    student chose beneath it): ``export/submission_5/submission_1.ipynb`` is ``submission_5``'s."""
    return (str(submission), *key_parts(str(submission)))


def _apply_late(rec: dict[str, Any], rules: LateRules) -> None:
    """Sets the record's late verdict and multiplies (or blanks) its scores."""
    sid, names = rec["student_id"], _names(rec["submission"])
    t, why = rules.times.find(sid, *names) if rules.times else (None, "")
    due = rules.extensions.get(f"id:{sid}") or next(
        (rules.extensions[f"file:{n}"] for n in names if f"file:{n}" in rules.extensions), None)
    v = _late.assess(rules.policy, t, due, why)
    if rules.times is not None and not rules.times.trusted and t is not None:
        v["words"] += " (time from the file's mtime)"
    v["extended"] = due is not None
    rec["late"] = v
    rec["note"] = v["words"]
    if v["factor"] is None:
        rec["scores"] = dict.fromkeys(rec["scores"])
    elif v["factor"] != 1.0:
        rec["scores"] = {ex: None if s is None else round(s * v["factor"], 6) for ex, s in rec["scores"].items()}


def _late_section(students: list[dict[str, Any]], rules: LateRules) -> dict[str, Any]:
    counts: Counter[str] = Counter({s: 0 for s in (*_late.STATES, NO_SUBMISSION)})
    for s in students:
        counts[s["late"]["state"] if s.get("late") else NO_SUBMISSION] += 1
    times = rules.times
    return {"policy": rules.policy.words(),
            "times": times.source if times else "none given: every submission's time is unknown",
            "trusted": bool(times is None or times.trusted),
            "problems": list(times.notes) if times else [],
            "counts": dict(counts),
            "extensions": sum(bool(s.get("late", {}).get("extended")) for s in students),
            "students": [{"student": s["student_id"], "state": s["late"]["state"], "words": s["late"]["words"]}
                         for s in students if s.get("late") and s["late"]["state"] != "on time"]}


def _override_notes(r: ResultRow) -> list[str]:
    return notes_for(r)


def build(results: Sequence[ResultRow], roster: dict[str, dict[str, str]] | None = None,
          late: LateRules | None = None) -> Book:
    """The gradebook of result rows.

    Args:
        results: docs/grading-contract.md's result rows.
        roster: :func:`read_roster`'s mapping, or None (students named by file name).
        late: the late policy to apply, or None.

    Raises:
        GradebookError: a submission the roster does not name, or two submissions of one student.
    """
    exercises = list(dict.fromkeys(ex for r in results for ex in r.get("exercises", {})))
    book = Book(exercises, {}, [])
    seen: dict[str, str] = {}
    for r in results:
        who = _who(r, roster)
        if who["student_id"] in seen:
            hint = ("fix the roster or keep one submission" if roster is not None else
                    "name each submission's student with --roster ROSTER.csv (columns file, student_id; a file "
                    "may be a path's tail such as alice/work.ipynb)")
            raise GradebookError(f"{r['submission']} and {seen[who['student_id']]} are both student "
                                 f"{who['student_id']}: {hint}")
        seen[who["student_id"]] = str(r["submission"])
        scores: dict[str, float | None] = {}
        for ex in exercises:
            e = r.get("exercises", {}).get(ex)
            if e is None or is_graders(str(e.get("status"))):
                scores[ex] = None
                book.blanks.append(f"{r['submission']} {ex}: {e.get('status') if e else 'not in the results'}; "
                                   "left blank")
            else:
                scores[ex] = float(e["score"])
        rec: dict[str, Any] = {**who, "submission": str(r["submission"]), "scores": scores, "note": ""}
        if late is not None:
            _apply_late(rec, late)
            if rec["late"]["factor"] is None:
                book.blanks.append(f"{r['submission']}: {rec['note']}")
        overridden = _override_notes(r)
        if overridden:  # manual overrides (autograder/reports/overrides.py): the autograder's score kept in words
            rec["note"] = "; ".join(filter(None, [rec["note"], *overridden]))
        book.students.append(rec)
    if roster is not None:
        found = {s.get("roster_key") for s in book.students}
        for rk, row in roster.items():
            if rk not in found:
                sid = row.get("student_id") or rk
                book.students.append({"student_id": sid, "name": row.get("name") or sid,
                                      "email": row.get("email", ""), "section": row.get("section", ""), "key": rk,
                                      "submission": "", "scores": dict.fromkeys(exercises), "note": NO_SUBMISSION})
                book.notes.append(f"{sid} ({rk}): {NO_SUBMISSION}; left blank")
    for s in book.students:
        vals = list(s["scores"].values())
        s["total"] = None if any(v is None for v in vals) else round(sum(vals), 6)
    book.maxima = {ex: max((float(r["exercises"][ex]["max_score"]) for r in results
                            if ex in r.get("exercises", {})), default=0.0) for ex in exercises}
    book.students.sort(key=lambda s: s["student_id"])
    if late is not None:
        book.late = _late_section(book.students, late)
        book.notes.extend(late.times.notes if late.times else [])
    return book


def _num(v: float | None) -> str:
    return "" if v is None else f"{v:g}"


def _text(v: Any) -> str:
    return str(csv_cell(v))


@dataclass(frozen=True)
class Grades:
    """The grade columns every format writes after its own id columns.

    Attributes:
        header: ``prefix + exercise`` per exercise, ``prefix + total``, and ``prefix + notes`` when there are notes.
        with_notes: whether the notes column is written (a late policy, or something to say).
    """

    header: list[str]
    with_notes: bool

    def of(self, book: Book, s: dict[str, Any]) -> list[str]:
        """One student's cells: a score per exercise (blank: the grader's or no time), the total, the note."""
        return [*[_num(s["scores"][ex]) for ex in book.exercises], _num(s["total"]),
                *([_text(s["note"])] if self.with_notes else [])]


Rows = Callable[[Book, Grades], list[list[str]]]


def _canvas(book: Book, grades: Grades) -> list[list[str]]:
    rows = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *grades.header],
            ["Points Possible", "", "", "", "", *[_num(book.maxima[ex]) for ex in book.exercises],
             _num(sum(book.maxima.values())), *([""] if grades.with_notes else [])]]
    return rows + [[*[_text(v) for v in (s["name"], "", s["student_id"], s["email"] or s["student_id"], s["section"])],
                    *grades.of(book, s)] for s in book.students]


def _moodle(book: Book, grades: Grades) -> list[list[str]]:
    with_email = any(s["email"] for s in book.students)
    rows = [["ID number", *(["Email address"] if with_email else []), *grades.header]]
    return rows + [[_text(s["student_id"]), *([_text(s["email"])] if with_email else []), *grades.of(book, s)]
                   for s in book.students]


@dataclass(frozen=True)
class Format:
    """An LMS's gradebook import.

    Attributes:
        rows: the CSV's rows for a book: its id columns, then :class:`Grades`.
        no_roster: the warning without ``--roster``: the id columns hold file stems (``alice``), not the LMS's
            ids, so the import matches nobody.
    """

    rows: Rows
    no_roster: str


# name -> format; ``tapetrace gradebook --format``'s choices (the first is the default): no other format exists
FORMATS: dict[str, Format] = {
    "canvas": Format(_canvas, "warning: no --roster: the SIS User ID and SIS Login ID columns hold file names "
                              "(alice), not Canvas SIS ids; give --roster ROSTER.csv (columns file, student_id) for "
                              "ids Canvas can match"),
    "moodle": Format(_moodle, "warning: no --roster: the ID number column holds file names (alice), not Moodle ID "
                              "numbers; give --roster ROSTER.csv (columns file, student_id) for ids Moodle can match"),
}


def to_csv(book: Book, fmt: str = "canvas", prefix: str = "tapetrace ") -> str:
    """The gradebook CSV text for ``fmt`` (a key of :data:`FORMATS`), written by that format's ``rows``.

    Raises:
        GradebookError: an unknown format.
    """
    if fmt not in FORMATS:
        raise GradebookError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    with_notes = book.late is not None or any(s["note"] for s in book.students)
    header = [_text(f"{prefix}{ex}") for ex in book.exercises] + [_text(f"{prefix}total")]
    grades = Grades(header + ([_text(f"{prefix}notes")] if with_notes else []), with_notes)
    buf = io.StringIO()
    csv.writer(buf).writerows(FORMATS[fmt].rows(book, grades))
    return buf.getvalue()
