"""The TPU chip of a ``--device tpu`` run, leased by the grader to one worker at a time.

A TPU chip is held by one process from the moment its JAX backend starts until the process ends; a second process
that tries fails at once ("Internal error when accessing libtpu multi-process lockfile", measured on a TPU v5e
host). A run that compares each submission with the reference in processes of their own must therefore take
turns, and the turns are the grader's to give, never a student's to take:

- the reference's answers first: before the first student worker of an exercise opens the chip, the bank's
  worker answers every call the exercise's checks make with the reference standing in for the student, and
  again with a stand-in whose every number differs from the reference's (:func:`unlike`: the paths a wrong
  answer takes, e.g. a diagnosis asked for only once the losses differ), then ends, freeing the chip;
- then each student worker in turn: a grading of an exercise holds the lease from its load to its close, so the
  worker it starts again after a crash opens the chip the last one freed;
- a reference answer not yet known while a student's worker holds the chip (a check's path the reference never
  took) cannot be asked for then: :class:`ReferenceMiss` stops the check, the student's worker is closed, the
  reference answers in a turn of its own, and the check runs again from its start (its inputs are drawn from its
  own seeded rng, so it asks the same questions).

A worker that could not open the chip (the last holder still ending) is started again after a pause: the grader's
trouble, never the student's (:data:`OPEN_ATTEMPTS`). Exercises whose workers do not open the chip (torch only,
or JAX on host CPU devices: :func:`autograder.core.device.on_chip`) never wait for the lease.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

# a worker whose chip was still held by the process before it (ending) is started again, at most this often
OPEN_ATTEMPTS = 4
# seconds between those starts (measured: a chip freed by an ended process opened again at once, so this is slack)
OPEN_PAUSE = 2.0
# a check that met this many reference answers nobody had asked for yet is the grader's trouble
MAX_MISSES = 12


class ReferenceMiss(BaseException):  # noqa: N818 - not an error: a turn of the chip the check must wait for
    """A reference answer not known yet, asked for while this thread's student worker holds the chip.

    A ``BaseException``: it must pass every ``except Exception`` of a check and of the check loop
    (:func:`autograder.core.suite.run_check`) up to the grading that holds the chip.

    Attributes:
        exercise: the exercise.
        probe: the reference probe asked for.
        kwargs: its arguments.
    """

    def __init__(self, exercise: str, probe: str, kwargs: dict[str, Any]) -> None:
        super().__init__(f"{exercise}: the reference's {probe} is not known yet")
        self.exercise = exercise
        self.probe = probe
        self.kwargs = kwargs


class ChipLease:
    """One chip, one holder at a time: a re-entrant lock that knows which thread holds it."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._holder: int | None = None
        self._depth = 0
        self.turns = 0  # how many times the chip changed hands between the run's threads
        # how many processes opened the chip (a student's worker, the reference's, one judging a check again; each
        # open costs 7-10 s on a TPU v5e): the run's cost, reported (cost_note)
        self.opens = 0
        self._counting = threading.Lock()

    def held_here(self) -> bool:
        """Whether the calling thread holds the chip."""
        return self._holder == threading.get_ident()

    def opened(self) -> None:
        """Counts one process that opened the chip."""
        with self._counting:
            self.opens += 1

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Holds the chip for the calling thread (waits for its turn; re-entrant)."""
        self._lock.acquire()
        self._holder = threading.get_ident()
        self._depth += 1
        if self._depth == 1:
            self.turns += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                self._holder = None
            self._lock.release()

    @contextmanager
    def lent(self) -> Iterator[None]:
        """Gives the chip up for the duration (the calling thread's hold, however deep), then takes it back: a
        grading whose student worker is closed lets the reference have a turn. A no-op where this thread holds
        nothing."""
        if not self.held_here():
            yield
            return
        depth = self._depth
        self._depth = 0
        self._holder = None
        for _ in range(depth):
            self._lock.release()
        try:
            yield
        finally:
            for _ in range(depth):
                self._lock.acquire()
            self._holder = threading.get_ident()
            self._depth = depth
            self.turns += 1


def unlike(answer: Any) -> Any:
    """The reference's answer with every float changed (arrays, scalars, inside dicts, lists and tuples; shapes,
    dtypes, ints and strings kept): a stand-in for a wrong student whose checks ask, while the reference holds
    the chip, what wrong answers lead them to ask."""
    if isinstance(answer, dict):
        return {k: unlike(v) for k, v in answer.items()}
    if isinstance(answer, tuple) and hasattr(answer, "_fields"):
        return type(answer)(*(unlike(v) for v in answer))
    if isinstance(answer, (list, tuple)):
        return type(answer)(unlike(v) for v in answer)
    if isinstance(answer, np.ndarray) and np.issubdtype(answer.dtype, np.floating):
        return (answer * 1.5 + 0.25).astype(answer.dtype)
    if isinstance(answer, (float, np.floating)):
        return type(answer)(answer * 1.5 + 0.25)
    return copy.deepcopy(answer)  # never the bank's own object: a check may change what the student returned


def cost_note(lease: ChipLease | None, submissions: int) -> str:
    """What a run's chip opens cost, said at the end of ``tapetrace grade --device tpu`` ('' off a chip).

    Args:
        lease: the run's lease (``GradingRun.chip``; None off a TPU).
        submissions: how many submissions the run graded.
    """
    if lease is None or lease.opens <= 0 or submissions <= 0:
        return ""
    return (f"the TPU chip was opened {lease.opens} times for {submissions} submission(s), "
            f"{lease.opens / submissions:.1f} a submission (7-10 s each, measured on a TPU v5e), by one process "
            "after another, where the CPU grades exercises side by side; `--device auto` keeps JAX on the CPU "
            "of a TPU host (docs/devices-and-tolerances.md)")
