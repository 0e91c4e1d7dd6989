"""One grading session as ``tapetrace grade`` runs it: interruptible, isolation checked first, always closed.

:func:`grade` makes the run (a :class:`autograder.engine.run.GradingRun`, or a cluster's), refuses it below
the isolation the instructor requires (:func:`check_isolation`), grades, and closes it whatever happens:
Ctrl-C (or SIGTERM, which :class:`Interrupts` turns into Ctrl-C) cancels the run, kills its workers and
returns with ``interrupted`` set, a second one is ignored while what was graded is written. The caller
gets the rows through its callbacks (the reports' checkpoint and progress) and writes the outputs; this
module prints nothing. :func:`grade_batch` is the wiring ``tapetrace grade`` and ``tapetrace regrade`` use: a
``--resume`` plan's merging (a regrade's earlier rows are one), the checkpoint and the progress display (made by
the CLI: the reports sit above the engine). The otter zip's run (``autograder/builders/otter_grade.py``) goes
through :func:`grade` too.
"""

from __future__ import annotations

import functools
import os
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from autograder.core import device as _device
from autograder.core.records import IsolationRecord, ResultRow
from autograder.engine import chip as _chip
from autograder.engine import reading as _reading
from autograder.engine import resume as _resume
from autograder.engine.reading import HideRefused


class Backend(Protocol):
    """What a grading run must offer a session (docs/grading-contract.md, "Backends"): the local
    :class:`autograder.engine.run.GradingRun` and the Dask client :class:`autograder.scaleout.cluster.ClusterRun`.

    ``grade`` grades the submissions and hands each finished row to ``on_result`` (assembled by
    :class:`autograder.engine.assembly.RowAssembly`: the driver only schedules); ``cancel`` stops it at once
    (Ctrl-C), ``close`` frees what it holds, whatever happened; ``keep_outputs`` keeps the run's own files from
    every student worker. A run that can measure its isolation beforehand also has ``measure_isolation``; one
    that takes turns on a TPU chip has ``chip`` (:class:`autograder.engine.chip.ChipLease`: its opens are reported).
    """

    seed: int

    def grade(self, paths: list[str], only: list[str] | None = None, jobs: int = 1,
              on_result: Callable[[ResultRow], None] | None = None,
              on_task: Callable[[int, str], None] | None = None,
              exercises_for: dict[str, list[str]] | None = None, deadline: float | None = None,
              resumed: dict[str, ResultRow] | None = None) -> list[ResultRow]: ...

    def cancel(self) -> None: ...

    def close(self) -> None: ...

    def keep_outputs(self, places: list[str], rewritten: list[str]) -> None: ...


class IsolationRefused(Exception):
    """The machine cannot isolate student code at the level ``--require-isolation`` asks for.

    Attributes:
        isolation: what a student's worker obtains here (its isolation record).
        wanted: the level asked for.
    """

    def __init__(self, message: str, isolation: IsolationRecord | dict[str, Any] | None = None,
                 wanted: str = "") -> None:
        super().__init__(message)
        self.isolation: dict[str, Any] = dict(isolation or {})
        self.wanted = wanted


def check_isolation(run: Backend, wanted: str | None) -> str:
    """Measures what a student's worker obtains here; refuses below the required level. The one isolation check of
    every driver that can measure beforehand: ``grade``, ``regrade`` (through :func:`grade`) and the otter zip.

    Args:
        run: the grading run (a cluster's has no ``measure_isolation``: its workers record the level they
            obtained in each result).
        wanted: ``--require-isolation`` (``full``, ``container``) or None.

    Returns:
        A note for the instructor when student code gets less than full isolation, else ``""``.

    Raises:
        IsolationRefused: below ``wanted`` (nothing is graded); it carries the record measured and ``wanted``.
    """
    from autograder.sandbox import isolate as _sandbox

    measure = getattr(run, "measure_isolation", None)
    if measure is None:
        return ""
    iso = measure()
    if wanted and not _sandbox.level_at_least(iso, wanted):
        raise IsolationRefused(f"--require-isolation {wanted}: student code would run with {_sandbox.describe(iso)}"
                               + (f" ({iso['error']})" if iso.get("error") else ""), isolation=iso, wanted=wanted)
    if iso.get("level") != "full":
        return f"{_sandbox.describe(iso)}; see README, \"Sandbox\""
    return ""


class Interrupts:
    """While entered (in the main thread): SIGTERM is Ctrl-C (``timeout``, batch schedulers); on leaving, the
    earlier SIGINT and SIGTERM handlers come back. Elsewhere (a thread) it changes nothing."""

    def __init__(self) -> None:
        self.main_thread = threading.current_thread() is threading.main_thread()
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Interrupts:
        if self.main_thread:
            self._previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
            signal.signal(signal.SIGTERM, _raise_interrupt)
        return self

    def hold(self) -> None:
        """Ignores Ctrl-C and SIGTERM from now on: a second one must not cut the clean-up and the writing."""
        if self.main_thread:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


def _raise_interrupt(_signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt


@dataclass
class Outcome:
    """How a session ended: ``interrupted`` (Ctrl-C), or ``error`` (the run could not start or go on: a
    device, the isolation, submissions that cannot be hidden from each other, the cluster; nothing more was
    graded); ``refused``: the isolation's refusal itself (its record, the level asked), where that was the error."""

    interrupted: bool = False
    error: str = ""
    refused: IsolationRefused | None = None


def grade(make_run: Callable[[], Backend], paths: list[str], only: list[str], *, interrupts: Interrupts,
          jobs: int | None, on_result: Callable[[ResultRow], None],
          on_task: Callable[..., None] | None = None, exercises_for: dict[str, list[str]] | None = None,
          deadline: float | None = None, require_isolation: str | None = None,
          errors: tuple[type[Exception], ...] = (), on_ready: Callable[[str], None] | None = None,
          on_done: Callable[[], None] | None = None, outputs: tuple[str | None, ...] = (),
          checkpoint: str | None = None, resumed: dict[str, ResultRow] | None = None,
          on_end: Callable[[str], None] | None = None) -> Outcome:
    """Grades ``paths`` in one run; Ctrl-C stops it cleanly.

    Args:
        make_run: makes the run (its options bound).
        paths: the submissions, in order.
        only: the exercises.
        interrupts: the entered :class:`Interrupts` (held once interrupted).
        jobs: ``(submission, exercise)`` pairs graded at once.
        on_result: called with each submission's row.
        on_task: called as each ``(submission, exercise)`` ends.
        exercises_for: for a submission graded again in part (``--resume``), its exercises.
        deadline: a ``time.monotonic()`` by which the run ends (what is left is ``ungraded``).
        require_isolation: see :func:`check_isolation`.
        errors: further exceptions that end the session with ``error`` (a cluster's).
        on_ready: called once the run is made and admitted, with its notes, one a line: the device's (JAX kept
            on the CPU on a TPU host) and :func:`check_isolation`'s.
        on_done: called when grading ends, before the run is cancelled or closed.
        outputs: the run's own files (``--json``, ``--csv``, ``--feedback``): kept from every student worker
            (:func:`keep_outputs`).
        checkpoint: the one of ``outputs`` rewritten while grading (``--json``).
        resumed: for a submission graded again in part, its earlier row (the run merges the new exercises in).
        on_end: called after ``on_done`` with the run's closing note where it has one: on a TPU chip, what the
            chip's opens cost (:func:`autograder.engine.chip.cost_note`).

    Returns:
        The :class:`Outcome`.
    """
    outcome = Outcome()
    run = None
    end_note = ""
    stopping: tuple[type[Exception], ...] = (_device.DeviceError, HideRefused, *errors)  # the run cannot go on
    try:
        try:
            run = make_run()
            keep_outputs(run, outputs, checkpoint)
            note = check_isolation(run, require_isolation)
            if on_ready is not None:
                # the device's note (JAX kept off a TPU: autograder.core.device) first, then the isolation's
                on_ready("\n".join(n for n in (*getattr(run, "device_notes", ()), note) if n))
            extra: dict[str, Any] = {"deadline": deadline} if deadline is not None else {}
            if resumed:
                extra["resumed"] = resumed
            run.grade(paths, only=only, jobs=jobs or 0,  # 0 or None: the plan's default (Plan.jobs_for)
                      on_result=on_result, on_task=on_task,
                      exercises_for=exercises_for, **extra)
            end_note = _chip.cost_note(getattr(run, "chip", None), len(paths))
        except IsolationRefused as err:
            outcome.error, outcome.refused = str(err), err
        except stopping as err:
            outcome.error = str(err)
        finally:
            if on_done is not None:
                on_done()
        if end_note and on_end is not None:
            on_end(end_note)
    except KeyboardInterrupt:
        outcome.interrupted = True
        interrupts.hold()
    finally:
        if run is not None:
            if outcome.interrupted:
                run.cancel()
            run.close()
    return outcome


def keep_outputs(run: Backend, outputs: tuple[str | None, ...], checkpoint: str | None) -> None:
    """Keeps a run's own outputs (classmates' scores and feedback, the ``--resume`` file) from its students'
    workers: their places (:func:`autograder.engine.reading.output_places`) are hidden like the submissions'.

    Args:
        run: the grading run (a local one, or a cluster's: both have ``keep_outputs``).
        outputs: the output paths (None where not asked for).
        checkpoint: the output rewritten while grading; where its own folder cannot be hidden it is a file the
            worker's sandbox must keep out of reach after the worker started (Landlock, or a uid of its own).
    """
    keep = getattr(run, "keep_outputs", None)
    if keep is None or not any(outputs):
        return
    tmp = str(getattr(run, "tmp", "") or tempfile.gettempdir())
    places = _reading.output_places(outputs, tmp)
    keep(places, [p for p in _reading.output_places([checkpoint], tmp) if not os.path.isdir(p)])


class Progress(Protocol):
    """What a session tells its progress display (``autograder.reports.progress.Progress``)."""

    def begin(self) -> None: ...

    def update(self, res: ResultRow) -> None: ...

    def task_done(self, *args: Any) -> None: ...

    def close(self) -> None: ...


def grade_batch(make_run: Callable[..., Backend], paths: list[str], only: list[str], *, interrupts: Interrupts,
                add: Callable[[ResultRow], None], progress: Progress, resumed: _resume.Plan | None = None,
                jobs: int | None = None, deadline: float | None = None, require_isolation: str | None = None,
                errors: tuple[type[Exception], ...] = (), on_note: Callable[[str], None] | None = None,
                outputs: tuple[str | None, ...] = (), checkpoint: str | None = None,
                **run_options: Any) -> Outcome:
    """:func:`grade` wired as ``tapetrace grade`` runs it: each row to ``add`` (the checkpoint) and ``progress``.

    Args:
        make_run: makes the run; ``run_options`` are passed to it (device, timeout, seed, lang...).
        paths: the submissions to grade now (after ``--shard`` and ``--resume``).
        only: the exercises.
        interrupts: the entered :class:`Interrupts`.
        add: takes each submission's row (the reports' checkpoint).
        progress: the progress display: begun once the run is ready, told of each task and row, closed.
        resumed: a ``--resume`` plan (:func:`autograder.engine.resume.plan`): a submission graded again in
            part grades only its exercises to do, and the run merges them into its earlier row before ``add``
            and ``progress`` take it (:class:`autograder.engine.assembly.RowAssembly`).
        jobs: see :func:`grade`.
        deadline: see :func:`grade`.
        require_isolation: see :func:`grade`.
        errors: see :func:`grade`.
        on_note: called with each note of the run (the device's, :func:`check_isolation`'s, and at the end the
            chip's cost on a TPU) that is not empty.
        outputs: see :func:`grade`.
        checkpoint: see :func:`grade`.
        **run_options: ``make_run``'s keyword arguments.

    Returns:
        The :class:`Outcome`.
    """
    def ready(notes: str) -> None:
        for note in notes.splitlines():
            if note and on_note is not None:
                on_note(note)
        progress.begin()

    def on_result(res: ResultRow) -> None:
        add(res)
        progress.update(res)

    return grade(functools.partial(make_run, **run_options), paths, only, interrupts=interrupts, jobs=jobs,
                 on_result=on_result, on_task=progress.task_done,
                 exercises_for=resumed.exercises_for if resumed is not None else None, deadline=deadline,
                 require_isolation=require_isolation, errors=errors, on_ready=ready, on_done=progress.close,
                 outputs=outputs, checkpoint=checkpoint, resumed=resumed.partial if resumed is not None else None,
                 on_end=on_note)


def threads_left(wait: float = 2.0) -> bool:
    """Whether grading threads are still alive ``wait`` seconds after an interrupt."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if not any(t.name.startswith("tapetrace-grade") and t.is_alive() for t in threading.enumerate()):
            return False
        time.sleep(0.05)
    return True
