"""The grading engine: submissions x exercises -> results (docs/grading-contract.md, "Row schema").

Per (submission, exercise) a student worker loads the code in a sandbox;
each check of the hidden suite runs in this process and asks that worker
and the reference worker for probe results. A timeout or crash kills the
worker; the next check gets a fresh one. The reference runs in workers that
never see student code, and its results are cached per grading run (they
depend only on the run's seed).
"""

from __future__ import annotations

import contextlib
import copy
import os
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from autograder.core import device as _device
from autograder.core import registry as _registry
from autograder.core.protocol import check_rng, probe_error, reference_key
from autograder.core.records import ExerciseRow, IsolationRecord, ResultRow
from autograder.core.registry import JAX_ONLY
from autograder.core.suite import Check, Ctx, GraderBug
from autograder.engine import chip as _chip
from autograder.engine import libraries
from autograder.engine import rows as _rows
from autograder.engine.assembly import RowAssembly, RunFacts
from autograder.engine.exercise import ExerciseGrading
from autograder.engine.host import ExerciseHost
from autograder.engine.jaxcache import jax_cache_dir
from autograder.engine.outcomes import DEADLINE_MARGIN, DeadlineReached
from autograder.engine.reading import hide_places, read_all
from autograder.engine.reference import ReferenceBank
from autograder.engine.run_workers import RunWorkers, TrackedLauncher
from autograder.sandbox import quota as _quota
from autograder.submissions import loader as _loader
from autograder.workers import compile_cache as _compile_cache
from autograder.workers import envelope as _envelope
from autograder.workers import sizing as _sizing

# Shared with the notebook self-check (autograder/builders/public.py): one key, one rng, one verdict.
_key = reference_key


_probe_error = probe_error


def schedule(exercises: list[str]) -> list[str]:
    """The order a submission's exercises are handed to the --jobs threads.

    JAX-only exercises first: their workers come from the zygote that imports the JAX stack only
    (``_launch.ZygotePair``), ready ~2 s before the full one, which meanwhile imports PyTorch.
    Within each group longest first, so no long exercise is left alone at the end while the other
    threads idle (wall time of one submission with --jobs 2: see benchmarks/). Costs are each
    exercise's ``META.cost`` (autograder/exercises/<exercise>/__init__.py).
    """
    return sorted(exercises, key=lambda ex: (ex not in JAX_ONLY, -_registry.cost(ex)))


class GradingRun(RunWorkers):
    """One grading run: device, seed, launcher and reference bank shared by all submissions.

    ``exercises``: the exercises it will grade (None: every one). Its zygotes import and warm only what they
    need (``_registry.zygote_needs``); grading another one still works, its workers importing the rest.
    """

    def __init__(self, *, device: str = "auto", timeout: float = 30.0, seed: int | None = None,
                 lang: str = "en", public_only: bool = False, launcher: str = "auto",
                 mem_bytes: int | None = None, sandbox: bool = True, debug: bool = False,
                 launch_prefix: list[str] | None = None, sandbox_skip: list[str] | None = None,
                 exercises: list[str] | None = None) -> None:
        self.device_notes: list[str] = []  # what --device auto chose against the default backend, and why
        self.device = _device.resolve(device, notes=self.device_notes)
        self.timeout = float(timeout)
        self.seed = int(seed) if seed is not None else secrets.randbelow(2**31)
        self.lang = lang
        self.public_only = public_only
        # the box (container limits) and the plan made from it: exercises at once, zygotes, caps (_envelope)
        self.envelope = _envelope.current()
        self.plan = _sizing.plan(self.envelope, fork=hasattr(os, "fork"))
        self._mem_fixed = mem_bytes is not None
        self.mem_bytes = mem_bytes if mem_bytes is not None else self.plan.worker_memory
        self.jobs = self.plan.jobs
        self._expired = threading.Event()  # the run's deadline came (see grade)
        self._expired_at = float("inf")
        self._t0 = time.monotonic()
        self._deadline_s = 0.0
        self._in_flight: dict[str, int] = {}  # exercise -> gradings of it under way (reference workers)
        self._attempts = threading.local()  # .final: whether grade() runs a first attempt in this thread
        self.sandbox = sandbox
        self.debug = debug
        self.tmp = tempfile.mkdtemp(prefix="tapetrace-run-")
        # enterable, not listable: an unprivileged student worker reaches its own scratch (0700, its own)
        # and nothing else here (the sources of other submissions sit in 0700 folders)
        os.chmod(self.tmp, 0o711)
        self.jax_cache, self._run_cache = jax_cache_dir(self.tmp)
        # what the reference compiled, lent to students' workers by key (None: TAPETRACE_JAX_CACHE=off)
        self.lender = _compile_cache.Lender(self.jax_cache) if self.jax_cache else None
        self._cancel = threading.Event()
        # e.g. setpriv dropping CAP_SYS_ADMIN: workers then run as in a default Docker container (tests)
        self.launch_prefix = list(launch_prefix or [])
        self.sandbox_skip = list(sandbox_skip or [])  # layers not to try: see _sandbox.apply
        # the exercises it is made for (None: every one): what its zygotes import and warm before forking
        self.exercises = list(exercises) if exercises is not None else None
        self.launcher = TrackedLauncher(self._make_launcher(launcher, self.exercises))
        self.reference = ReferenceBank(self)
        self.chip = self.reference.chip  # --device tpu: the chip's lease (engine.chip), else None
        self._prepared: set[str] = set()  # chip exercises whose reference answered first (_prepare_chip)
        self._preparing = threading.Lock()
        self.libraries = libraries.LibraryCheck(cpu_jax=self._cpu_jax)  # asked only after a load failed
        self.watch = _quota.ScratchWatch()  # students' workers' disk use, at every isolation level
        self.isolation: IsolationRecord = {}
        self._hide: list[str] = []
        self._rewritten: list[str] = []  # the run's outputs it rewrites while grading (keep_outputs)
        self._scratch_ids = iter(range(10**9))
        self._lock = threading.Lock()

    def cancel(self) -> None:
        """Stops the run now (Ctrl-C): no new workers, running ones killed, unfinished work dropped."""
        self._cancel.set()
        self.launcher.kill_all()

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called."""
        return self._cancel.is_set()

    def close(self) -> None:
        self.reference.close()
        self.launcher.close()
        self.watch.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)
        if self._run_cache and self.jax_cache:
            shutil.rmtree(self.jax_cache, ignore_errors=True)

    # ------------------------------------------------------------------ grading
    def grade_exercise(self, sub: _loader.Submission, exercise: str, final: bool | None = None) -> ExerciseRow:
        """Grades one exercise of one submission; never raises (see :class:`ExerciseGrading`).

        Args:
            sub: the submission.
            exercise: the exercise.
            final: False for a first attempt that may be repeated alone: trouble that may be the grader's
                (a worker's death, a worker that could not start, the reference's trouble) stops it at once
                and the row carries ``retry`` (the reason). True: no second chance; such trouble left
                after the rules of :meth:`ExerciseGrading.death_trouble` is ``grader_error``. None: what
                :meth:`grade` is doing in this thread (a first attempt or the second), else True.

        Returns:
            The exercise's row (docs/grading-contract.md, "Row schema"); ``ungraded`` when the run's deadline cut it short.
        """
        if final is None:
            final = getattr(self._attempts, "final", True)
        self._enter(exercise)
        try:
            chip = self.chip if self.chip is not None and self.chip_exercise(exercise) else None
            grading = ExerciseGrading(self.host(exercise), sub, exercise, final=final)
            try:
                if chip is not None:
                    self._prepare_chip(exercise)
                with chip.hold() if chip is not None else contextlib.nullcontext():
                    res = grading.open()
                    if res is None:
                        try:
                            for check in grading.checks:
                                self._run_check(grading, check, chip)
                                if grading.retry:
                                    break
                        finally:
                            grading.close()
                        res = grading.summary()
            except DeadlineReached:
                res = None
            ended = time.monotonic()
        finally:
            self._leave(exercise)
        if res is None or (self._expired.is_set() and ended >= self._expired_at):
            return self._deadline_row(exercise)
        return res

    def _run_check(self, grading: ExerciseGrading, check: Check, chip: _chip.ChipLease | None) -> None:
        """Runs one check; on a TPU chip, a reference answer nobody had asked for yet stops it
        (:class:`~autograder.engine.chip.ReferenceMiss`): the student's worker is closed, the reference answers in a
        turn of its own, and the check runs again from its start (its rng is its own: the same questions)."""
        if chip is None:
            grading.run(check)
            return
        for _miss in range(_chip.MAX_MISSES):
            try:
                grading.run(check)
                return
            except _chip.ReferenceMiss as miss:
                grading.close()  # its worker ends: the chip is free for the reference's turn
                with chip.lent():
                    try:
                        self.reference.call(miss.exercise, miss.probe, miss.kwargs)
                    except GraderBug as err:
                        grading.record(check, err)  # the reference's own trouble: the grader's
                        return
        grading.record(check, GraderBug(f"{check.name}: the reference was asked for more than {_chip.MAX_MISSES} "
                                        "answers it had not given before, one turn of the chip each"))

    def _prepare_chip(self, exercise: str) -> None:
        """The reference's answers first (``--device tpu``): every check of ``exercise`` run with the reference
        answering for itself and standing in for the student, once as itself and once with every number changed
        (:func:`~autograder.engine.chip.unlike`: the paths wrong answers take), in one turn of the chip, so the
        students' turns ask it nothing more (what a wrong answer still leads a check to ask, the check asks later:
        :meth:`_run_check`). Once per exercise and run; whatever the checks raise here is not a verdict."""
        # one preparation at a time, before any hold of the chip: a grading of an exercise already answered (or
        # being answered in another thread) takes no turn of the chip for it (the turns are what the run reports)
        with self._preparing:
            if exercise in self._prepared:
                return
            self._prepared.add(exercise)
            with self.reference.preparing(exercise):
                device = self.device_for(exercise)
                for check in _rows.exercise_checks(exercise, self.public_only):
                    for stand_in in (copy.deepcopy, _chip.unlike):  # a right answer, then a wrong one
                        ctx = Ctx(rng=check_rng(self.seed, exercise, check.name), seed=self.seed, device=device,
                                  student=lambda p, _c, _s, kw, _e=exercise, _as=stand_in: _as(
                                      self.reference.call(_e, p, kw)),
                                  reference=lambda p, kw, _e=exercise: self.reference.call(_e, p, kw))
                        with contextlib.suppress(Exception):
                            check.fn(ctx)

    def host(self, exercise: str | None = None) -> ExerciseHost:
        """What grading one exercise needs of this run (:class:`ExerciseGrading`'s only view of it); with
        ``exercise``, its own devices (:meth:`device_for`) and whether its workers take turns on the chip."""
        device = self.device_for(exercise) if exercise is not None else self.device
        on_chip = exercise is not None and self.chip is not None and self.chip_exercise(exercise)
        return ExerciseHost(lang=self.lang, public_only=self.public_only, seed=self.seed, device=device,
                            on_chip=on_chip,
                            timeout=self.timeout, mem_bytes=self.mem_bytes, tmp=self.tmp, envelope=self.envelope,
                            start_worker=self.start_worker, scratch_id=self.scratch_id,
                            note_isolation=self.note_isolation, reference_call=self.reference.call,
                            fresh_reference=self.reference.fresh, library_trouble=self.libraries.trouble)

    def _enter(self, exercise: str) -> None:
        with self._lock:
            self._in_flight[exercise] = self._in_flight.get(exercise, 0) + 1

    def _leave(self, exercise: str) -> None:
        """One grading of ``exercise`` ended: with memory to spare its reference worker stays warm, else it
        is closed once no grading of that exercise is under way (its results stay cached)."""
        with self._lock:
            self._in_flight[exercise] -= 1
            idle = self._in_flight[exercise] == 0
        if idle and not self.plan.keep_references:
            self.reference.retire(exercise)

    def _deadline_row(self, exercise: str) -> ExerciseRow:
        return self.graders_row(exercise, "ungraded", f"the run's deadline ({self._deadline_s:g} s) came before this "
                                "exercise was graded (tapetrace grade --deadline; otter: the zip's deadline)")

    def _start_deadline(self, deadline: float | None) -> threading.Timer | None:
        """At ``deadline`` minus :data:`DEADLINE_MARGIN` (``time.monotonic()``), stops what is being graded."""
        if deadline is None:
            return None
        self._deadline_s = round(deadline - self._t0, 1)

        def expire() -> None:
            self._expired_at = time.monotonic()
            self._expired.set()
            self.launcher.kill_all()  # its workers' exercises become ungraded (grade_exercise)

        timer = threading.Timer(max(0.0, deadline - DEADLINE_MARGIN - time.monotonic()), expire)
        timer.daemon = True
        timer.start()
        return timer

    def grade(self, paths: list[str], only: list[str] | None = None, jobs: int = 1,
              on_result: Callable[[ResultRow], None] | None = None,
              on_task: Callable[[int, str], None] | None = None,
              exercises_for: dict[str, list[str]] | None = None,
              deadline: float | None = None, resumed: dict[str, ResultRow] | None = None) -> list[ResultRow]:
        """Grades submissions; one result object per path, in order, none dropped (``session.Backend``).

        The rows are assembled by :class:`~autograder.engine.assembly.RowAssembly` (what each path grades,
        ``exercises_for`` and ``resumed`` for ``--resume``, the callbacks, an exercise graded again alone);
        ``on_result`` and ``on_task`` are called from grading threads. This method only schedules.

        ``jobs`` exercises are graded at once, at most the plan's ``max_jobs`` (the memory allows no more).
        An exercise whose first attempt met trouble that may be the grader's is graded again once the others
        are done, alone, with the other reference workers closed (``ExerciseGrading``'s ``final``).
        ``deadline`` (a ``time.monotonic()`` value): what is not graded :data:`DEADLINE_MARGIN` seconds
        before it is ``ungraded``, so the results are complete in time.
        """
        jobs = self.plan.jobs_for(jobs)
        self.jobs = jobs
        if not self._mem_fixed:
            self.mem_bytes = self.plan.worker_memory_at(jobs)
        timer = self._start_deadline(deadline)
        rows = RowAssembly(paths, only, seed=self.seed, facts=self.facts, exercises_for=exercises_for,
                           resumed=resumed, on_result=on_result, on_task=on_task)
        _rows.preload_suites({e for w in rows.wanted for e in w})  # in this thread, before the grading threads
        self.hide(hide_places(paths, self.tmp))  # HideRefused before anything is read or graded
        subs = read_all(paths, self.timeout)
        if self.sandbox and not self.isolation:  # recorded from the start: a row without student code has it too
            self.measure_isolation()

        def attempt(i: int, ex: str, final: bool) -> ExerciseRow:
            sub = subs[i]
            try:
                if self._expired.is_set():
                    return self._deadline_row(ex)
                if isinstance(sub, Exception):
                    return _rows.early_row(ex, sub, lang=self.lang, public_only=self.public_only)
                self._attempts.final = final  # (read by grade_exercise in this thread)
                return self.grade_exercise(sub, ex)
            except Exception as err:  # noqa: BLE001 - nothing lost; the grader's trouble, not the student's
                return self.graders_row(ex, "grader_error", f"internal error: {type(err).__name__}: {err}")
            finally:
                self._attempts.final = True

        def task(i: int, ex: str) -> None:
            if self._cancel.is_set():
                return
            res = attempt(i, ex, final=False)
            if not self._cancel.is_set():  # else its workers were killed mid-way: the result would be wrong
                rows.offer(i, ex, res)

        order = [(i, ex) for i in range(len(paths)) for ex in schedule(rows.wanted[i])]
        # The main thread only waits, so Ctrl-C lands here (never inside a check) and
        # cancels at once instead of waiting for the tasks in flight.
        pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="tapetrace-grade")
        alone = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tapetrace-grade")
        try:
            for fut in [pool.submit(task, i, ex) for i, ex in order]:
                fut.result()
            pool.shutdown()
            # the second attempts: one at a time, with every other exercise's reference worker closed
            for again in rows.again():
                if self._cancel.is_set():
                    break
                self.reference.retire_all_but(again.exercise)
                res = alone.submit(attempt, again.i, again.exercise, True).result()
                if self._cancel.is_set():
                    break
                rows.record_again(again, res)
            alone.shutdown()
        except BaseException:
            self.cancel()
            pool.shutdown(wait=False, cancel_futures=True)
            alone.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            if timer is not None:
                timer.cancel()
        return rows.close()

    def facts(self) -> RunFacts:
        """What a finished row states of this run (:class:`~autograder.engine.assembly.RunFacts`)."""
        return RunFacts(device=self.device, isolation=self.isolation, launcher=self.launcher.kind,
                        envelope=_sizing.as_json(self.envelope, self.plan, self.jobs), public_only=self.public_only)

    def graders_row(self, exercise: str, status: str, reason: str) -> ExerciseRow:
        """A row the student's code did not earn (``grader_error`` or ``ungraded``): :func:`rows.graders_row`."""
        return _rows.graders_row(exercise, status, reason, lang=self.lang, public_only=self.public_only)

    def unreadable_row(self, exercise: str, error: str | dict[str, Any], status: str = "unreadable") -> ExerciseRow:
        """The row of an exercise whose submission could not be read: :func:`rows.unreadable_row`."""
        return _rows.unreadable_row(exercise, error, lang=self.lang, public_only=self.public_only, status=status)
