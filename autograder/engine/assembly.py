"""One set of rules for a run's rows: which exercises each submission grades, what is pending, what is graded
again, when a submission's row is finished, and a ``--resume``'s earlier row merged in.

The local run (:meth:`autograder.engine.run.GradingRun.grade`), the Dask client
(:meth:`autograder.scaleout.cluster.ClusterRun.grade`) and the pytest entry (``autograder/pytest_plugin.py``)
each make one :class:`RowAssembly` and only schedule: threads, Dask futures, pytest items (``tapetrace regrade``,
its earlier rows as ``resumed``, and the otter zip grade through the local run). The rules
(docs/grading-contract.md, "Assembling a submission's row"):

- a submission grades the run's exercises (``--only``), narrowed by ``exercises_for`` (``--resume``);
- an exercise's first attempt whose row carries ``retry`` (trouble that may be the grader's) is not recorded:
  it is queued (:meth:`RowAssembly.again`) and graded again once the first attempts are done, its row then
  noting the first attempt (:func:`retried`);
- a row is finished (:func:`finish`: its device, order, totals, the run's facts, stamps) when its
  last exercise is recorded and the device it was graded on is known; ``on_task`` is called for every exercise
  recorded, ``on_result`` once per finished row;
- a submission with nothing to grade is finished at :meth:`RowAssembly.close`;
- a resumed submission's row is its earlier row with the exercises graded again merged in
  (:func:`autograder.engine.resume.merge`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from autograder.core.paths import EXERCISES
from autograder.core.records import ExerciseRow, IsolationRecord, ResultRow
from autograder.engine import resume as _resume
from autograder.engine import rows as _rows

# The first line of a second attempt's instructor_log (docs/grading-contract.md, "Assembling a submission's row").
RETRIED_NOTE = "first attempt: {why}; graded again alone"


@dataclass(frozen=True)
class RunFacts:
    """What a finished row states of its run, read when the row is finished.

    Attributes:
        device: the run's resolved device (``{}``: not known yet, e.g. before any Dask worker answered).
        isolation: the weakest isolation a student's worker obtained so far.
        launcher: the launcher's kind.
        envelope: the box and plan (``workers.sizing.as_json``), or None (a Dask cluster's: its workers').
        public_only: whether the run grades the public checks only.
    """

    device: dict[str, str]
    isolation: IsolationRecord
    launcher: str
    envelope: dict[str, object] | None
    public_only: bool


@dataclass(frozen=True)
class TaskFacts:
    """Where one exercise was graded, as its worker told (a Dask worker's run): its isolation and device.
    A row's isolation is then the weakest of its exercises', its device the last one told."""

    isolation: IsolationRecord
    device: dict[str, str]


class Again(NamedTuple):
    """An exercise to grade again, alone: its submission's index, the exercise, why the first attempt stopped."""

    i: int
    exercise: str
    why: str


def retried(row: ExerciseRow, why: str) -> ExerciseRow:
    """A second attempt's row, its ``instructor_log`` opened by the first attempt's reason (:data:`RETRIED_NOTE`)."""
    row["instructor_log"] = [RETRIED_NOTE.format(why=why), *row.get("instructor_log", [])]
    return row


def finish(row: ResultRow, exercises: list[str], facts: RunFacts, told: TaskFacts | None = None) -> None:
    """Makes a submission's row whole, in place: the device its exercises were graded on (``told``: the last
    worker's, else the run's), then :func:`autograder.engine.rows.finish_row` (order, totals, the run's facts, the
    isolation: the weakest of its exercises', else the run's, and the fingerprints)."""
    row["device"] = dict((told.device if told else None) or facts.device)
    _rows.finish_row(row, exercises, isolation=(told.isolation if told else None) or facts.isolation,
                     launcher=facts.launcher, envelope=facts.envelope, public_only=facts.public_only)


def _weaker(a: IsolationRecord | None, b: IsolationRecord) -> IsolationRecord:
    from autograder.sandbox.isolate import level_at_least

    if a and level_at_least(b, str(a.get("level", "minimal"))):
        return a
    return b.copy()


class RowAssembly:
    """The rows of one run's submissions, assembled by the rules above; its methods are safe from any thread.

    Args:
        paths: the submissions, in order.
        only: the run's exercises (None or empty: every one).
        seed: the run's seed.
        facts: the run's facts, read as each row is finished (:class:`RunFacts`).
        exercises_for: for a submission graded again in part (``--resume``), its exercises.
        resumed: for those, the earlier row the new exercises are merged into (``resume.Plan.partial``).
        on_result: called with each finished row (merged, for a resumed submission).
        on_task: called with ``(index, exercise)`` as each exercise is recorded.
    """

    def __init__(self, paths: list[str], only: list[str] | None, *, seed: int, facts: Callable[[], RunFacts],
                 exercises_for: dict[str, list[str]] | None = None, resumed: dict[str, ResultRow] | None = None,
                 on_result: Callable[[ResultRow], None] | None = None,
                 on_task: Callable[[int, str], None] | None = None) -> None:
        self.paths = list(paths)
        self.exercises = [e for e in EXERCISES if not only or e in only]
        self.wanted = [[e for e in self.exercises if e in (exercises_for or {}).get(p, self.exercises)]
                       for p in self.paths]
        self.facts = facts
        self.resumed = dict(resumed or {})
        self.on_result = on_result
        self.on_task = on_task
        device = facts().device
        self.rows: list[ResultRow] = [_rows.empty_row(p, device, seed) for p in self.paths]
        self.pending = [len(w) for w in self.wanted]
        self.finished = [False] * len(self.paths)
        self._told: dict[int, TaskFacts] = {}  # per row: its exercises' weakest isolation, their device
        self._waiting: list[int] = []  # rows complete before the device was known
        self._again: list[Again] = []
        self._lock = threading.RLock()

    # ----------------------------------------------------------------- recording
    def offer(self, i: int, exercise: str, row: ExerciseRow, task: TaskFacts | None = None) -> bool:
        """A first attempt's row: recorded, or, when it carries ``retry``, queued to be graded again.

        Returns:
            Whether it was queued (:meth:`again` hands it back).
        """
        if row.get("retry"):
            with self._lock:
                self._again.append(Again(i, exercise, str(row["retry"])))
            return True
        self.record(i, exercise, row, task)
        return False

    def again(self) -> list[Again]:
        """The exercises queued by :meth:`offer` (in submission, then exercise order), taken off the queue."""
        with self._lock:
            out, self._again = sorted(self._again), []
        return out

    def record_again(self, again: Again, row: ExerciseRow, task: TaskFacts | None = None) -> None:
        """Records a second attempt's row (:func:`retried`)."""
        self.record(again.i, again.exercise, retried(row, again.why), task)

    def record(self, i: int, exercise: str, row: ExerciseRow, task: TaskFacts | None = None) -> None:
        """Records an exercise's final row; finishes its submission's row when it was the last one."""
        with self._lock:
            self.rows[i]["exercises"][exercise] = row
            if task is not None:
                told = self._told.get(i)
                self._told[i] = TaskFacts(_weaker(told.isolation if told else None, task.isolation)
                                          if task.isolation else (told.isolation if told else {}),
                                          dict(task.device))
            self.pending[i] -= 1
            if self.on_task:
                self.on_task(i, exercise)
            if self.pending[i] == 0:
                self._waiting.append(i)
            self._finish_waiting(force=False)

    def close(self, partial: bool = False) -> list[ResultRow]:
        """Finishes what is left: rows waiting for the device, submissions with nothing to grade, and with
        ``partial`` (the pytest entry: items deselected or not reached) rows some exercises never reached.

        Returns:
            The rows begun or finished, in order (a cancelled run's unfinished ones too, never handed on).
        """
        with self._lock:
            self._finish_waiting(force=True)
            for i in range(len(self.paths)):
                if not self.finished[i] and (not self.wanted[i] or partial):
                    self._finish(i)
            return [r for i, r in enumerate(self.rows) if self.finished[i] or r["exercises"]]

    # ----------------------------------------------------------------- finishing
    def _finish_waiting(self, *, force: bool) -> None:
        keep = []
        for i in self._waiting:
            if force or self.facts().device or (i in self._told and self._told[i].device):
                self._finish(i)
            else:
                keep.append(i)
        self._waiting = keep

    def _finish(self, i: int) -> None:
        """Makes row ``i`` whole (:func:`autograder.engine.rows.finish_row`) and hands it on."""
        row = self.rows[i]
        finish(row, self.wanted[i], self.facts(), self._told.get(i))
        old = self.resumed.get(row["submission"])
        if old is not None:
            row = self.rows[i] = _resume.merge(old, row, self.exercises)
        self.finished[i] = True
        if self.on_result:
            self.on_result(row)
