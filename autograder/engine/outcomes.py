"""How a grading ends when it is not a verdict: cancelled, past its deadline, the grader's trouble, a
worker's death (the words of an OOM kill), a forged exercise.
"""

from __future__ import annotations

from typing import Any

from autograder.core.records import TestRow
from autograder.core.suite import GraderBug
from autograder.workers import sizing as _sizing

MAX_TIMEOUTS_PER_EXERCISE = 3

# every test of an exercise whose worker wrote frames its loop never writes (``_handle.WorkerDied`` "forged")
FORGED = "EXERCISE_FORGED"


def voided(tests: list[TestRow], message: str) -> list[TestRow]:
    """The tests of a forged exercise: each one that passed scores 0 now, with ``message`` (no answer of a worker
    that wrote beside its loop is trusted, those of checks already passed included)."""
    return [t if not t["passed"] else {**t, "score": 0.0, "passed": False, "message": message, "code": FORGED}
            for t in tests]


DEFAULT_MEM_BYTES = _sizing.DEFAULT_WORKER_BYTES  # a student worker's address-space cap with room to spare


# Seconds before a run's deadline at which what is still being graded is stopped (``ungraded``), so the
# results are written in time.
DEADLINE_MARGIN = 5.0


def _with_death(err: GraderBug, death: dict[str, Any] | None) -> GraderBug:
    """``err`` carrying how the reference's worker died (its stderr tail goes to the instructor's log)."""
    err.death = death  # type: ignore[attr-defined]  # this one exception's, read back with getattr (ExerciseGrading)
    return err


def _oom_words(death: dict[str, Any] | None) -> str:
    return " (killed by the kernel's OOM killer: the container's memory ran out)" if death and death.get("oom") else ""


class GradingCancelled(Exception):
    """The run was cancelled (Ctrl-C): no new worker starts."""


class DeadlineReached(GradingCancelled):
    """The run's deadline came: what is still being graded is ``ungraded``."""


class GradersTrouble(GraderBug):
    """A worker's death or start failure that may be the grader's (the container's memory, load, a start
    that failed): the exercise is graded again, alone; after that it is ``grader_error`` if still the grader's."""
