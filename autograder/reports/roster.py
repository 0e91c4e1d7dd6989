"""The roster and whose a submission is: the key a submission's file name gives its student, a roster CSV read,
and the roster's row for a submission.

A roster maps files to students (columns ``file`` and ``student_id``, optional ``name``, ``email``, ``section``;
a ``file`` may be a path's tail such as ``alice/work.ipynb`` where every student's file has the same name). Read
by the gradebook (:mod:`autograder.reports.gradebook`, which re-exports these names), the late policy
(:mod:`autograder.reports.late`), the overrides (:mod:`autograder.reports.overrides`), the hand-back and the
review page; it imports none of them.
"""

from __future__ import annotations

import csv
from pathlib import Path, PurePath

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


def key_parts(path: str) -> tuple[str, ...]:
    """A path's components, the last one as :func:`student_key` gives it: ``subs/alice/work.ipynb`` ->
    ``("subs", "alice", "work")``."""
    parts = [p for p in PurePath(str(path).replace("\\", "/").rstrip("/")).parts if p not in ("/", ".")]
    return (*parts[:-1], student_key(parts[-1])) if parts else ()


def read_roster(path: str) -> dict[str, dict[str, str]]:
    """``file`` (its key: ``alice``, or ``alice/work`` for a path) -> the roster row (``student_id``, optional
    ``name``, ``email``, ``section``).

    Raises:
        GradebookError: no ``file``/``student_id`` columns, or a file named twice.
    """
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rows = list(csv.DictReader(fh))
    if not rows or not {"file", "student_id"} <= set(rows[0]):
        raise GradebookError(f"{path}: a roster needs the columns file and student_id")
    out: dict[str, dict[str, str]] = {}
    for r in rows:
        key = "/".join(key_parts(r["file"].strip()))
        if key in out:
            raise GradebookError(f"{path}: {r['file']} is named twice")
        out[key] = {k: (v or "").strip() for k, v in r.items() if k}
    return out


def roster_key(roster: dict[str, dict[str, str]], submission: str) -> str | None:
    """The roster's key for a submission: the longest roster ``file`` that is its path's tail; None if none."""
    parts = key_parts(submission)
    for n in range(len(parts), 0, -1):
        key = "/".join(parts[-n:])
        if key in roster:
            return key
    return None
