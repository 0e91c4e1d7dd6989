"""Gradebook export: a CSV that Canvas or Moodle imports, one column per exercise and a total.

The student is named by the submission's file name (``alice.ipynb``, ``alice.zip``, the folder
``alice/``: ``alice``), or by a roster CSV mapping file names to students (columns ``file`` and
``student_id``, optional ``name``, ``email``, ``section``). An exercise the grader could not grade
(``grader_error``, ``ungraded``) is left blank, never a 0: an LMS would keep the blank and the
instructor is told (fail closed). A submission missing from a given roster is refused, not guessed.

Canvas: the columns of its gradebook export (``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``,
``Section``, one per assignment) with a ``Points Possible`` row. Moodle: ``ID number`` (and ``Email
address`` when the roster has one), one column per grade item; map the identifier on import.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from autograder.core.status import is_graders
from autograder.core.text import csv_cell

FORMATS = ("canvas", "moodle")
_SUFFIXES = (".ipynb", ".zip", ".py")


class GradebookError(Exception):
    """The gradebook cannot be written as asked (a roster that does not cover the submissions)."""


def student_key(submission: str) -> str:
    """The name a submission's file gives its student: ``subs/alice.ipynb`` -> ``alice``."""
    name = Path(str(submission).rstrip("/\\")).name
    for suf in _SUFFIXES:
        if name.lower().endswith(suf):
            return name[: -len(suf)]
    return name


def read_roster(path: str) -> dict[str, dict[str, str]]:
    """``file`` (its student key) -> the roster row (``student_id``, optional ``name``, ``email``, ``section``).

    Raises:
        GradebookError: no ``file``/``student_id`` columns, or a file named twice.
    """
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rows = list(csv.DictReader(fh))
    if not rows or not {"file", "student_id"} <= set(rows[0]):
        raise GradebookError(f"{path}: a roster needs the columns file and student_id")
    out: dict[str, dict[str, str]] = {}
    for r in rows:
        key = student_key(r["file"].strip())
        if key in out:
            raise GradebookError(f"{path}: {r['file']} is named twice")
        out[key] = {k: (v or "").strip() for k, v in r.items() if k}
    return out


def rows(results: list[dict[str, Any]], roster: dict[str, dict[str, str]] | None = None
         ) -> tuple[list[str], list[dict[str, Any]], list[str]]:
    """(exercises, one record per student, notes) for the export.

    Raises:
        GradebookError: a submission the roster does not name, or two submissions of one student.
    """
    exercises = list(dict.fromkeys(ex for r in results for ex in r.get("exercises", {})))
    out, notes, seen = [], [], {}
    for r in results:
        key = student_key(str(r["submission"]))
        who = {"student_id": key, "name": key, "email": "", "section": ""}
        if roster is not None:
            if key not in roster:
                raise GradebookError(f"{r['submission']}: not in the roster (its file name {key!r} is no roster file)")
            who.update({k: v for k, v in roster[key].items() if k in who and v})
        if who["student_id"] in seen:
            raise GradebookError(f"{r['submission']} and {seen[who['student_id']]} are both student "
                                 f"{who['student_id']}")
        seen[who["student_id"]] = r["submission"]
        scores: dict[str, float | None] = {}
        for ex in exercises:
            e = r.get("exercises", {}).get(ex)
            if e is None or is_graders(str(e.get("status"))):
                scores[ex] = None
                notes.append(f"{r['submission']} {ex}: {e.get('status') if e else 'not in the results'}; left blank")
            else:
                scores[ex] = float(e["score"])
        blank = any(v is None for v in scores.values())
        out.append({**who, "scores": scores, "total": None if blank else round(sum(scores.values()), 6)})
    maxima = {ex: max((float(r["exercises"][ex]["max_score"]) for r in results if ex in r.get("exercises", {})),
                      default=0.0) for ex in exercises}
    out.sort(key=lambda s: s["student_id"])
    return exercises, [{"maxima": maxima}, *out], notes


def _num(v: float | None) -> str:
    return "" if v is None else f"{v:g}"


def to_csv(results: list[dict[str, Any]], fmt: str = "canvas", roster: dict[str, dict[str, str]] | None = None,
           prefix: str = "tapetrace ") -> tuple[str, list[str]]:
    """The gradebook CSV text and the notes (blank cells) for ``fmt`` (``canvas`` or ``moodle``)."""
    if fmt not in FORMATS:
        raise GradebookError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    exercises, recs, notes = rows(results, roster)
    maxima, students = recs[0]["maxima"], recs[1:]
    buf = io.StringIO()
    w = csv.writer(buf)
    cols = [f"{prefix}{ex}" for ex in exercises] + [f"{prefix}total"]
    if fmt == "canvas":
        w.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *cols])
        w.writerow(["Points Possible", "", "", "", "", *[_num(maxima[ex]) for ex in exercises],
                    _num(sum(maxima.values()))])
        for s in students:
            w.writerow([csv_cell(v) for v in (s["name"], "", s["student_id"], s["email"] or s["student_id"],
                                              s["section"], *[_num(s["scores"][ex]) for ex in exercises],
                                              _num(s["total"]))])
    else:
        with_email = any(s["email"] for s in students)
        w.writerow(["ID number", *(["Email address"] if with_email else []), *cols])
        for s in students:
            w.writerow([csv_cell(v) for v in (s["student_id"], *([s["email"]] if with_email else []),
                                              *[_num(s["scores"][ex]) for ex in exercises], _num(s["total"]))])
    return buf.getvalue(), notes
