"""The reference workers of a run: one per exercise, never touched by student code, and the cache of their
probe results (they depend only on the run's seed), kept on disk between runs where a store is given
(:mod:`autograder.engine.refstore`); and the reference run again, fresh, for a check judged again
(:class:`FreshReference`: a worker of its own, nothing cached).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from autograder.core.paths import EXERCISES, SOLUTIONS
from autograder.core.protocol import reference_key as _key
from autograder.core.suite import GraderBug
from autograder.engine import chip as _chip
from autograder.engine import refstore as _refstore
from autograder.engine.outcomes import _oom_words, _with_death
from autograder.workers import handle as _handle
from autograder.workers.records import Role


class WorkerSource(Protocol):
    """What the bank needs of its run (a :class:`autograder.engine.run.GradingRun`): workers and their timeout."""

    timeout: float
    device: dict[str, Any]

    def start_worker(self, exercise: str, source_path: str, role: Role,
                     hide_extra: list[str] | None = None) -> _handle.Worker: ...

    def chip_exercise(self, exercise: str) -> bool:
        """Whether ``exercise`` 's workers open the run's TPU chip (``engine.chip``)."""
        ...


class ReferenceBank:
    """Reference workers (one per exercise, never touched by student code) + cache (+ the disk's: ``refstore``,
    on unless ``TAPETRACE_REFERENCE_CACHE=off``, opened once when the bank is made)."""

    def __init__(self, run: WorkerSource) -> None:
        self._run = run
        self._workers: dict[str, _handle.Worker] = {}
        self._locks = {ex: threading.Lock() for ex in EXERCISES}
        self._cache: dict[str, Any] = {}
        self._store = _refstore.open_store(run.device)
        # where the answers are kept: every student worker is kept from it (GradingRun's sandbox spec)
        self.store_folder: str | None = str(self._store.folder) if self._store is not None else None
        # --device tpu: the chip's lease (engine.chip); None on every other run
        self.chip: _chip.ChipLease | None = _chip.ChipLease() if run.device.get("jax") == "tpu" else None
        self._preparing = threading.local()  # .exercise: the exercise whose answers this thread asks for first

    def call(self, exercise: str, probe: str, kwargs: dict[str, Any]) -> Any:
        key = _key(exercise, probe, kwargs)
        if key in self._cache:
            return self._cache[key]
        if self.chip is None or not self._run.chip_exercise(exercise):
            return self._answer(exercise, probe, kwargs, key)
        preparing = getattr(self._preparing, "exercise", None) == exercise
        if self.chip.held_here() and not preparing:  # a student's worker of this thread holds the chip
            raise _chip.ReferenceMiss(exercise, probe, kwargs)
        with self.chip.hold():  # the chip, then the exercise's lock: one order for every thread
            try:
                return self._answer(exercise, probe, kwargs, key)
            finally:
                if not preparing:  # its worker must not keep the chip past this turn
                    self.retire(exercise)

    @contextmanager
    def preparing(self, exercise: str) -> Iterator[None]:
        """The reference's answers first (``--device tpu``): this thread holds the chip, and the bank's worker of
        ``exercise`` answers every call made meanwhile, then is closed (the chip freed for the students)."""
        assert self.chip is not None
        with self.chip.hold():
            self._preparing.exercise = exercise
            try:
                yield
            finally:
                self._preparing.exercise = None
                self.retire(exercise)

    def _answer(self, exercise: str, probe: str, kwargs: dict[str, Any], key: str) -> Any:
        """The answer to ``key``: the disk's, else the bank's worker's (started if none is alive)."""
        with self._locks[exercise]:
            if key in self._cache:
                return self._cache[key]
            solution = SOLUTIONS / f"{exercise}.py"
            if self._store is not None and (kept := self._store.get(key, solution)) is not _refstore.MISS:
                self._cache[key] = kept
                return kept
            for _attempt in range(2):
                worker = self._workers.get(exercise)
                if worker is None or not worker.alive:
                    worker = self._run.start_worker(exercise, str(solution), "reference")
                    if worker.status.get("status") != "loaded":
                        st = worker.status
                        raise _with_death(GraderBug(f"reference for {exercise} did not load: {st.get('code')} "
                                                    f"{st.get('fields', {})}{_oom_words(st.get('death'))}"),
                                          st.get("death"))
                    self._workers[exercise] = worker
                try:
                    resp = worker.call(probe, kwargs, self._run.timeout * 4)
                    break
                except _handle.WorkerDied as err:
                    self._workers.pop(exercise, None)
                    last = err
            else:
                raise _with_death(GraderBug(f"reference worker for {exercise} died: {last}{_oom_words(last.death)}"),
                                  last.death)
            if not resp.get("ok"):
                raise GraderBug(f"reference probe {probe} failed: {resp}")
            self._cache[key] = resp["value"]
            if self._store is not None:
                self._store.put(key, solution, resp["value"])
            return resp["value"]

    def fresh(self, exercise: str) -> FreshReference:
        """The reference of ``exercise`` run again, fresh, for one check judged again (:class:`FreshReference`)."""
        return FreshReference(self._run, exercise)

    def close(self) -> None:
        _handle.close_all(list(self._workers.values()))
        self._workers.clear()

    def retire(self, exercise: str) -> None:
        """Closes the reference worker of ``exercise`` (its results stay cached): memory for the others."""
        with self._locks[exercise]:
            worker = self._workers.pop(exercise, None)
        if worker is not None:
            worker.close()

    def retire_all_but(self, exercise: str) -> None:
        """Closes every reference worker but ``exercise`` 's (before grading it alone)."""
        for ex in list(self._workers):
            if ex != exercise:
                self.retire(ex)


class FreshReference:
    """The reference run again, fresh, standing in for the student in one check judged again
    (:mod:`autograder.engine.whose`).

    A worker of its own (never the bank's, never its cache): it loads the solution at the first call, and each
    call runs there, in the order the check makes them. So a probe whose answer depends on the calls before it
    (ex05's trace counters, a step fed back its own state) answers as it would have for the student, where the
    cache, keyed by probe and arguments, would give a repeated call its first answer again. Closed after the
    check (:meth:`close`); one more worker only while a crashed check is judged again.

    Args:
        run: the run (its workers and their timeout).
        exercise: the exercise, e.g. ``"ex05_jit_train_step"``.
    """

    def __init__(self, run: WorkerSource, exercise: str) -> None:
        self._run = run
        self.exercise = exercise
        self._worker: _handle.Worker | None = None

    def call(self, probe: str, kwargs: dict[str, Any]) -> Any:
        """Runs ``probe`` on the fresh reference (under the bank's timeout: the run's, 4 times).

        Raises:
            GraderBug: it did not load, died (carrying its death), or its probe failed.
        """
        worker = self._worker
        if worker is None:
            worker = self._worker = self._run.start_worker(self.exercise, str(SOLUTIONS / f"{self.exercise}.py"),
                                                           "reference")
        st = worker.status
        if st.get("status") != "loaded":
            raise _with_death(GraderBug(f"the reference for {self.exercise}, run again fresh, did not load: "
                                        f"{st.get('code')} {st.get('fields', {})}{_oom_words(st.get('death'))}"),
                              st.get("death"))
        try:  # no second attempt: its state (the calls before this one) would be lost
            resp = worker.call(probe, kwargs, self._run.timeout * 4)
        except _handle.WorkerDied as err:
            raise _with_death(GraderBug(f"the reference for {self.exercise}, run again fresh, died: "
                                        f"{err}{_oom_words(err.death)}"), err.death) from None
        if not resp.get("ok"):
            raise GraderBug(f"reference probe {probe} failed: {resp}")
        return resp["value"]

    def close(self) -> None:
        """Closes its worker (idempotent)."""
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.close()
