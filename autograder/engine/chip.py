"""The TPU chip of a ``--device tpu`` run, leased by the grader to one worker at a time.

A TPU chip is held by one process from the moment its JAX backend starts until the process ends; a second process
that tries fails at once ("Internal error when accessing libtpu multi-process lockfile", measured on a TPU v5e
host). A run that compares each submission with the reference in processes of their own must therefore take
turns, and the turns are the grader's to give, never a student's to take:

- the reference's answers first: before the first student worker of an exercise opens the chip, the bank's
  worker answers every call the exercise's checks make with the reference standing in for the student
  (:meth:`autograder.engine.reference.ReferenceBank.prepare`), then ends, freeing the chip;
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

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

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
        self.turns = 0  # how many times the chip changed hands (each a chip open: the run's cost, reported)

    def held_here(self) -> bool:
        """Whether the calling thread holds the chip."""
        return self._holder == threading.get_ident()

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


def cost_note(lease: ChipLease | None, submissions: int) -> str:
    """What a run's turns of the chip cost, said at the end of ``tapetrace grade --device tpu`` ('' off a chip).

    Args:
        lease: the run's lease (``GradingRun.chip``; None off a TPU).
        submissions: how many submissions the run graded.
    """
    if lease is None or lease.turns <= 0 or submissions <= 0:
        return ""
    return (f"the TPU chip changed hands {lease.turns} times for {submissions} submission(s), "
            f"{lease.turns / submissions:.1f} a submission: each turn opens the chip (7-10 s measured on a TPU v5e), "
            "one after another, where the CPU grades exercises side by side; `--device auto` keeps JAX on the CPU "
            "of a TPU host (docs/devices-and-tolerances.md)")
