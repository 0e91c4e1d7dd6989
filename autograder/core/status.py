"""An exercise's status (docs/grading-contract.md, "Statuses"): whose it is, and the rows a grader writes for its own trouble.

Six statuses are the student's (``graded``, ``missing``, ``error``, ``timeout``, ``crashed``,
``unreadable``): what their code or file earned. Two are never the student's: ``grader_error`` (the
grader's own trouble after a retry: an OOM kill caused by the container's limit, the reference's worker
dying, a worker that cannot import what grading needs, a check that crashed) and ``ungraded`` (not
reached: the run's deadline, a cluster fault, no acceptable worker). Both score 0, send the run's exit
status to 3, and are what ``--resume`` grades again. Their student-facing message is neutral (it never
blames the student's code); the reason goes to the instructor in the row's ``grader_reason``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from autograder.core.records import ExerciseRow, ResultRow, TestRow
from autograder.core.text import hidden

STUDENT_STATUSES = ("graded", "missing", "error", "timeout", "crashed", "unreadable")
GRADER_STATUSES = ("grader_error", "ungraded")
STATUSES = STUDENT_STATUSES + GRADER_STATUSES

# Exit status of `tapetrace grade` when it ran but some exercise is the grader's (docs/grading-contract.md, "Exit codes").
EXIT_NOT_ALL_GRADED = 3

# The student-facing message key of each grader status (autograder/messages/common.py).
MESSAGE_KEY = {"grader_error": "GRADER_TROUBLE", "ungraded": "NOT_GRADED_YET"}

# How long an instructor-facing reason may be (it can quote a worker's stderr tail).
MAX_REASON = 2000


def is_graders(status: str) -> bool:
    """Whether ``status`` is the grader's own (scored 0, regraded by ``--resume``), not the student's."""
    return status in GRADER_STATUSES


def grader_row(checks: Iterable[Any], status: str, reason: str, *, lang: str) -> ExerciseRow:
    """An exercise result the student's code did not earn: every check at 0, a neutral message.

    Args:
        checks: the exercise's checks (objects with ``name``, ``points``, ``hidden``).
        status: ``grader_error`` or ``ungraded``.
        reason: what happened, for the instructor (kept in ``grader_reason``, capped).
        lang: the student message's language.

    Returns:
        docs/grading-contract.md's exercise row (``ExerciseRow``) with ``status`` and ``grader_reason``.
    """
    from autograder.core.i18n import render

    if status not in GRADER_STATUSES:
        raise ValueError(f"not a grader status: {status!r}")
    key = MESSAGE_KEY[status]
    msg = render(key, lang)
    checks = list(checks)
    tests: list[TestRow] = [{"name": c.name, "score": 0.0, "max_score": c.points, "passed": False,
              "hidden": c.hidden, "message": msg, "code": key} for c in checks]
    return {"score": 0.0, "max_score": float(sum(c.points for c in checks)), "status": status,
            "message": msg, "grader_reason": clean_reason(reason), "seconds": 0.0, "tests": tests}


def clean_reason(text: str, limit: int = MAX_REASON) -> str:
    """An instructor-facing reason: printable, one paragraph, capped at ``limit`` characters (it may quote a
    worker's output)."""
    out = "".join("?" if hidden(ch) and ch != "\n" else ch for ch in str(text))
    return out[:limit]


def graders_exercises(result: ResultRow) -> list[str]:
    """The exercises of one submission's result whose status is the grader's (to grade again)."""
    return [ex for ex, e in result.get("exercises", {}).items() if is_graders(str(e.get("status", "")))]


def count_graders(results: Iterable[ResultRow]) -> dict[str, int]:
    """How many exercises of ``results`` have each grader status (``{}`` when none)."""
    counts: dict[str, int] = {}
    for res in results:
        for e in res.get("exercises", {}).values():
            st = str(e.get("status", ""))
            if is_graders(st):
                counts[st] = counts.get(st, 0) + 1
    return counts
