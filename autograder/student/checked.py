"""What this session's self-checks found, per exercise: a figure says when it draws code whose checks fail.

``check("ex02")`` (:mod:`autograder.builders.public`) records each exercise's outcome here; ``figure("ex02")``
(:mod:`autograder.student.figures`) reads it, so a figure drawn from code that fails its public checks
says so instead of looking like a result.
"""

from __future__ import annotations

LAST: dict[str, tuple[int, int]] = {}  # exercise -> (public checks failed, public checks) at its last check


def record(exercise: str, failed: int, total: int) -> None:
    """Keeps the outcome of ``exercise``'s latest self-check in this session."""
    LAST[exercise] = (int(failed), int(total))


def failing(exercise: str) -> tuple[int, int] | None:
    """``(failed, total)`` when the latest self-check of ``exercise`` did not pass, else None (passed, or not run)."""
    outcome = LAST.get(exercise)
    return outcome if outcome is not None and outcome[0] else None
