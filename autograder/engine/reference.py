"""The reference workers of a run: one per exercise, never touched by student code, and the cache of their
probe results (they depend only on the run's seed), kept on disk between runs where a store is given
(:mod:`autograder.engine.refstore`).
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

from autograder.core.paths import EXERCISES, SOLUTIONS
from autograder.core.protocol import reference_key as _key
from autograder.core.suite import GraderBug
from autograder.engine import refstore as _refstore
from autograder.engine.outcomes import _oom_words, _with_death
from autograder.workers import handle as _handle


class WorkerSource(Protocol):
    """What the bank needs of its run (a :class:`autograder.engine.run.GradingRun`): workers and their timeout."""

    timeout: float
    device: dict[str, Any]

    def start_worker(self, exercise: str, source_path: str, role: str,
                     hide_extra: list[str] | None = None) -> _handle.Worker: ...


class ReferenceBank:
    """Reference workers (one per exercise, never touched by student code) + cache (+ the disk's, if any:
    ``TAPETRACE_REFERENCE_CACHE``, read once when the bank is made)."""

    def __init__(self, run: WorkerSource) -> None:
        self._run = run
        self._workers: dict[str, _handle.Worker] = {}
        self._locks = {ex: threading.Lock() for ex in EXERCISES}
        self._cache: dict[str, Any] = {}
        folder = _refstore.folder_from_env()
        self._store = _refstore.ReferenceStore(folder, run.device) if folder is not None else None

    def call(self, exercise: str, probe: str, kwargs: dict[str, Any]) -> Any:
        key = _key(exercise, probe, kwargs)
        if key in self._cache:
            return self._cache[key]
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
