"""The rows no check earned, and a submission's row made whole (docs/grading-contract.md, "Row schema").

One place for every driver (the local run, the Dask client and the pytest entry, through
:class:`autograder.engine.assembly.RowAssembly`): a submission's empty row (:func:`empty_row`), an
exercise the grader could not grade (:func:`graders_row`: ``grader_error`` or ``ungraded``), one whose file
could not be read (:func:`unreadable_row`), and the totals and run facts stamped on a finished row
(:func:`finish_row`). Every function is pure: it takes the run's facts as arguments, never the run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from autograder import hidden  # hidden.load_suite: one place to find (and, in tests, replace) a suite
from autograder.core import device as _device
from autograder.core import status as _status
from autograder.core.i18n import render
from autograder.core.records import ExerciseRow, IsolationRecord, ResultRow
from autograder.core.suite import Check
from autograder.core.text import clean
from autograder.engine.reading import read_error
from autograder.submissions.loadguard import ReaderTrouble


def exercise_checks(exercise: str, public_only: bool = False) -> list[Check]:
    """The checks a run grades of one exercise (the public ones only with ``public_only``)."""
    return [c for c in hidden.load_suite(exercise).checks if not public_only or not c.hidden]


def preload_suites(exercises: Iterable[str]) -> None:
    """Imports the hidden suites of ``exercises`` in the calling thread, before a run's grading threads start:
    under pytest (the pytest entry, the test suite) an import is rewritten through ``ast.parse``, and two
    parses in two threads can fail each other (``autograder/core/syntax.py``). A suite that does not import
    is left for its exercise's own grading to meet (its row says so)."""
    for exercise in sorted(exercises):
        try:
            hidden.load_suite(exercise)
        except Exception:  # noqa: BLE001, S112 - met again, and recorded, where the exercise is graded
            continue


def empty_row(path: str, device: dict[str, str], seed: int) -> ResultRow:
    """A submission's row before any exercise is recorded in it.

    Args:
        path: the submission, as given.
        device: the run's resolved device (copied).
        seed: the run's seed.
    """
    return {"submission": path, "device": dict(device), "seed": seed,
            "total": 0.0, "max_total": 0.0, "exercises": {}}


def graders_row(exercise: str, status: str, reason: str, *, lang: str, public_only: bool) -> ExerciseRow:
    """A row the student's code did not earn (``grader_error`` or ``ungraded``; see ``core.status``).

    Args:
        exercise: the exercise.
        status: ``grader_error`` or ``ungraded``.
        reason: the grader's reason (the instructor's; cleaned by ``core.status``).
        lang: the messages' language.
        public_only: whether the run grades the public checks only.
    """
    return _status.grader_row(exercise_checks(exercise, public_only), status, reason, lang=lang)


def unreadable_row(exercise: str, error: str | dict[str, Any], *, lang: str, public_only: bool,
                   status: str = "unreadable", key: str = "UNREADABLE") -> ExerciseRow:
    """The row of an exercise whose submission could not be read: every check at 0 with the reason.

    Args:
        exercise: the exercise.
        error: why (a text that may quote file names the student chose, or a catalogued text:
            :func:`autograder.engine.reading.read_error`).
        lang: the messages' language.
        public_only: whether the run grades the public checks only.
        status: the row's status (``unreadable``, or the loader's, e.g. ``missing``).
        key: the message's catalogue key.
    """
    checks = exercise_checks(exercise, public_only)
    # it may quote file names the student chose; a dict is a catalogued text (read_error)
    msg = render(key, lang, error=clean(error) if isinstance(error, str) else error)
    return {"score": 0.0, "max_score": float(sum(c.points for c in checks)), "status": status,
            "message": msg, "seconds": 0.0,
            "tests": [{"name": c.name, "score": 0.0, "max_score": c.points, "passed": False,
                       "hidden": c.hidden, "message": msg, "code": key} for c in checks]}


def early_row(exercise: str, err: Exception, *, lang: str, public_only: bool) -> ExerciseRow:
    """The row of an exercise whose submission could not be read: decided before any of its code is loaded.

    The one rule for every driver (``tapetrace grade``, ``--cluster``, the pytest entry, ``regrade``, the otter
    path), applied to what :func:`autograder.engine.reading.read_one` gave where it is not a submission: a
    reading child that could not start is the grader's trouble (``grader_error``); any other error is
    ``unreadable`` (or the status the error names, e.g. over the reading budget) with the loader's words, every
    check 0.

    Args:
        exercise: the exercise.
        err: why the submission could not be read.
        lang: the messages' language.
        public_only: whether the run grades the public checks only.
    """
    if isinstance(err, ReaderTrouble):
        return graders_row(exercise, "grader_error", str(err), lang=lang, public_only=public_only)
    status = getattr(err, "status", None)
    return unreadable_row(exercise, read_error(err), lang=lang, public_only=public_only,
                          status=status if isinstance(status, str) else "unreadable")


def finish_row(row: ResultRow, exercises: list[str], *, isolation: IsolationRecord, launcher: str,
               envelope: dict[str, Any] | None, public_only: bool) -> None:
    """Makes a submission's row whole, in place: its exercises in order, totals, the run's facts, stamps.

    Args:
        row: the row (:func:`empty_row` with its exercises recorded).
        exercises: the exercises it grades, in the order rows list them.
        isolation: the weakest isolation a student's worker obtained.
        launcher: the launcher's kind.
        envelope: the box and plan (``workers.sizing.as_json``), or None (a Dask cluster's rows: its workers').
        public_only: whether the run grades the public checks only.
    """
    row["exercises"] = {ex: row["exercises"][ex] for ex in exercises if ex in row["exercises"]}
    row["total"] = round(sum(e["score"] for e in row["exercises"].values()), 6)
    row["max_total"] = round(sum(e["max_score"] for e in row["exercises"].values()), 6)
    row["precision"] = dict(_device.PRECISION)
    row["isolation"] = isolation.copy()
    row["launcher"] = launcher
    if envelope is not None:
        row["envelope"] = envelope
    from autograder.core import verdict_fp as _verdict_fp

    _verdict_fp.stamp(row, public_only)  # what decides each verdict (regrade)
    from autograder.engine.regrade import stamp_checks

    stamp_checks(row)  # each check's points, definition and tolerances (a regrade names those that changed)
