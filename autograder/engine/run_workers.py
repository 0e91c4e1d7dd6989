"""A run's workers: starting them (sandboxed, tracked for cancelling), what they must not read, their isolation.

Owns :class:`TrackedLauncher` (a launcher that remembers the processes it started, so a cancelled run can
kill them) and :class:`RunWorkers`, the part of :class:`autograder.engine.run.GradingRun` that starts
workers: which launcher (the zygotes, or spawning), each worker's spec and sandbox (its scratch, limits,
what it must not read: the run's folder, other submissions, the compile cache), and the isolation a
student's worker obtains here (measured once, the weakest kept).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, cast

from autograder.core import device as _device
from autograder.core import registry as _registry
from autograder.core.build_record import private_dirs
from autograder.core.records import IsolationRecord
from autograder.engine import chip as _chip
from autograder.engine.jaxcache import cache_places
from autograder.engine.outcomes import DeadlineReached, GradingCancelled
from autograder.engine.reference import ReferenceBank
from autograder.sandbox import quota as _quota
from autograder.workers import compile_cache as _compile_cache
from autograder.workers import handle as _handle
from autograder.workers import launch as _launch
from autograder.workers import sizing as _sizing
from autograder.workers.records import Role, SandboxSpec, WorkerSpec

# What a worker's isolation record says of that one worker only, never of the run: its pids, CPU and memory
# cgroups, and how its loop's answers are confirmed (autograder.workers.confirm)
_ONE_WORKER = ("pids_cgroup", "cpu_cgroup", "memory_cgroup", "answers_confirmed")


def as_isolation_record(got: Mapping[str, object]) -> IsolationRecord:
    """A worker's isolation record as the row states it: the sandbox's own record, less :data:`_ONE_WORKER`.

    ``got`` is what :func:`autograder.sandbox.isolate.apply` returned in the worker, sent before any student code
    ran and read back as a JSON object (``_intake.isolation``), or the run's own ``{"level", "error"}``: its keys
    are :class:`IsolationRecord`'s, which is all the type says (a plain JSON object: docs/grading-contract.md)."""
    return cast(IsolationRecord, {k: v for k, v in got.items() if k not in _ONE_WORKER})


class TrackedLauncher:
    """A launcher that remembers the processes it started, so :meth:`GradingRun.cancel` can kill them.

    Workers live in their own sessions (a terminal's Ctrl-C never reaches them), so on an
    interrupt the grader must kill them itself, including ones still loading.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.kind: str = inner.kind
        self._procs: list[_launch.Proc] = []
        self._lock = threading.Lock()
        self._stopped = False  # after kill_all: a spawn still in flight is killed as soon as it returns

    @property
    def alive(self) -> bool:
        return bool(getattr(self.inner, "alive", True))

    def spawn(self, spec: WorkerSpec, fds: tuple[int, ...]) -> _launch.Proc:
        proc: _launch.Proc = self.inner.spawn(spec, fds)
        with self._lock:
            late = self._stopped
            if not late:
                self._procs = [p for p in self._procs if p.wait(0) is None]
                self._procs.append(proc)
        if late and proc.wait(0) is None:  # cancelled while it was forking: it must not outlive the run
            proc.kill()
        return proc

    def kill_all(self) -> None:
        """Kills every process started, and from now on every one a spawn in flight returns."""
        with self._lock:
            self._stopped = True
            procs, self._procs = self._procs, []
        for p in procs:
            if p.wait(0) is None:
                p.kill()

    def close(self) -> None:
        self.inner.close()


class RunWorkers:
    """The workers side of a :class:`autograder.engine.run.GradingRun` (a mixin: the run's ``__init__`` sets
    the attributes used here: ``device``, ``plan``, ``tmp``, ``jax_cache``, ``reference``, ``lender``, ``launcher``,
    ``launch_prefix``, ``sandbox``, ``sandbox_skip``, ``mem_bytes``, ``isolation``, ``chip``, the locks and events)."""

    chip: _chip.ChipLease | None  # --device tpu: the chip's lease, counting the workers that open it
    device: dict[str, str]
    plan: _sizing.Plan
    tmp: str
    jax_cache: str | None
    reference: ReferenceBank
    lender: _compile_cache.Lender | None
    launcher: TrackedLauncher
    launch_prefix: list[str]
    timeout: float
    debug: bool
    watch: _quota.ScratchWatch
    sandbox: bool
    sandbox_skip: list[str]
    mem_bytes: int
    _mem_fixed: bool
    isolation: IsolationRecord
    _cancel: threading.Event
    _expired: threading.Event
    _lock: threading.Lock
    _hide: list[str]
    _rewritten: list[str]
    _scratch_ids: Iterator[int]

    @property
    def _cpu_jax(self) -> bool:
        return self.device.get("jax", "cpu") == "cpu"

    def _make_launcher(self, kind: str, exercises: list[str] | None = None) -> Any:
        """The run's launcher: zygotes that import and warm what ``exercises`` need (None: every exercise;
        ``_registry.zygote_needs``); two (:class:`_launch.ZygotePair`) only where they need both frameworks.
        A worker of an exercise outside that plan imports the rest itself, after the fork."""
        prefix = self.launch_prefix
        needs = _registry.zygote_needs(exercises)
        if kind in ("auto", "zygote") and hasattr(os, "fork"):
            try:
                # one zygote: tight memory (the full one alone), or a plan with one framework (nothing to overlap)
                if (kind == "auto" and self.plan.launcher == "zygote") or not {"torch", "jax"} <= needs:
                    return _launch.ZygoteLauncher(cpu_jax=self._cpu_jax, prefix=prefix,
                                                  needs=None if exercises is None else needs)
                return _launch.ZygotePair(cpu_jax=self._cpu_jax, prefix=prefix,
                                          needs=None if exercises is None else needs)
            except (RuntimeError, OSError):
                if kind == "zygote":
                    raise
        return _launch.SpawnLauncher(cpu_jax=self._cpu_jax, prefix=prefix)

    def start_worker(self, exercise: str, source_path: str, role: Role,
                     hide_extra: list[str] | None = None) -> _handle.Worker:
        """Starts a worker for ``exercise`` loading ``source_path`` as ``role``."""
        if self._cancel.is_set():
            raise GradingCancelled("grading was cancelled")
        if self._expired.is_set():
            raise DeadlineReached("the run's deadline came")
        device = self.device_for(exercise)
        chip = role in ("student", "reference") and _device.on_chip(device, _registry.worker_needs(exercise))
        for attempt in range(1, _chip.OPEN_ATTEMPTS + 1):
            worker = self._start_worker(exercise, source_path, role, hide_extra, device, chip)
            opened = worker.status.get("status") != "chip_unavailable"
            if chip and opened and self.chip is not None:
                self.chip.opened()  # the run's cost (engine.chip.cost_note)
            if opened or attempt == _chip.OPEN_ATTEMPTS:
                return worker
            time.sleep(_chip.OPEN_PAUSE)  # the last holder may still be ending: the grader's turn to wait
        return worker

    def device_for(self, exercise: str) -> dict[str, str]:
        """The devices ``exercise`` is graded on (:func:`autograder.core.device.for_exercise`: ex13's meshes of
        host CPU devices keep JAX on the CPU of a TPU run)."""
        meta = _registry.REGISTRY.get(exercise)
        return _device.for_exercise(self.device, meta.cpu_devices if meta is not None else None)

    def chip_exercise(self, exercise: str) -> bool:
        """Whether ``exercise`` 's student and reference workers open the run's TPU chip (leased: ``engine.chip``)."""
        return _device.on_chip(self.device_for(exercise), _registry.worker_needs(exercise))

    def _start_worker(self, exercise: str, source_path: str, role: Role, hide_extra: list[str] | None,
                      device: dict[str, str], chip: bool) -> _handle.Worker:
        scratch = os.path.join(self.tmp, f"w{self.scratch_id()}")
        os.makedirs(scratch, mode=0o700)
        # every student JAX worker asks the grader for its programs (answered with nothing where the run lends
        # none): the grader counts what it compiles (ExerciseGrading.observed)
        borrow = role == "student" and _registry.worker_needs(exercise) != "torch"
        lend = borrow and self.lender is not None
        spec: WorkerSpec = {
            "exercise": exercise, "role": role, "source_path": source_path,
            "module_name": exercise, "device": device, "chip": chip,
            # the compile cache: the reference's workers read and write it. A student's never sees it (it
            # holds the reference's compiled programs): its JAX asks the grader for one program at a time
            # by key, i.e. only for a program it already holds, and writes nothing (_compile_cache)
            "jax_cache": self.jax_cache if role == "reference" else None,
            "borrow_compiles": borrow,
            "debug": self.debug,
            # the isolation probe imports neither framework: the zygote that is ready first serves it
            "needs": "jax" if role == "isolation" else _registry.worker_needs(exercise),
        }
        if role in ("student", "isolation") and self.sandbox:
            sandbox = spec["sandbox"] = self._sandbox_spec(scratch, hide_extra)
            # a student's loop reads its commands twice before its code loads: where the kernel then sees it wait
            # tells its loop from code inside a call reading them after each answer (_confirm)
            spec["calibrate"] = role == "student" and sys.platform.startswith("linux")
            if role == "student" and not self._mem_fixed and spec["needs"] != "torch":
                sandbox["mem_bytes"] += self.plan.stacks()  # XLA's threads' stacks: reserved, untouched
        if getattr(self.launcher, "alive", True) is False:
            self.launcher = TrackedLauncher(_launch.SpawnLauncher(cpu_jax=self._cpu_jax, prefix=self.launch_prefix))
        return _handle.Worker(self.launcher, spec, self.timeout, self.lender if lend else None,
                              watch=self.watch if role == "student" else None)

    def zygote_imports(self, modules: tuple[str, ...] | list[str], timeout: float) -> list[str] | None:
        """What of ``modules`` this run's zygotes could not import, once their imports are done.

        The zygotes import in fresh processes set up as workers are (``_launch.ZygoteLauncher``), so their
        word is as strong as ``fingerprint.ImportCheck``'s, and costs nothing more.

        Args:
            modules: the modules grading needs (``_warmup.PRELOAD``).
            timeout: seconds to wait for their last import (a hang guard).

        Returns:
            ``["optax: ImportError: ...", ...]`` in the order of ``modules`` (``[]``: all imported), one line
            saying a zygote died or hung while importing, or None where no zygote of this run meant to
            import them all (spawned workers, a zygote that did not start): ask ``ImportCheck`` then.
        """
        imports = getattr(getattr(self.launcher, "inner", self.launcher), "imports", None)
        if imports is None:
            return None
        try:
            planned, failed = imports(timeout)
        except RuntimeError as err:
            return [str(err)]
        if not set(modules) <= planned:
            return None
        return [f"{name}: {failed[name]}" for name in modules if name in failed]

    def _sandbox_spec(self, scratch: str, hide_extra: list[str] | None) -> SandboxSpec:
        """A student worker's sandbox: its scratch, limits, what it must not read, what it may."""
        with self._lock:
            # the compile cache too: its programs are lent by key only (_compile_cache), never read; and the
            # reference's kept answers (engine.refstore): expected values
            cache = [c for c in (self.jax_cache, self.reference.store_folder) if c]
            cache += cache_places()  # the defaults too, whatever this run uses
            hide = [*private_dirs(), self.tmp, *cache, *self._hide, *(hide_extra or [])]
            rewritten = list(self._rewritten)
        return {"scratch": scratch, "mem_bytes": self.mem_bytes, "fsize_bytes": _quota.FILE_BYTES,
                "hide": list(dict.fromkeys([*hide, *rewritten])), "read": [],
                "network": False, "skip": self.sandbox_skip, "rewritten": rewritten}

    def hide(self, places: Iterable[str]) -> None:
        """Keeps ``places`` (paths) from every student worker started from now on: other submissions."""
        with self._lock:
            self._hide = list(dict.fromkeys([*self._hide, *places]))

    def keep_outputs(self, places: list[str], rewritten: list[str]) -> None:
        """Keeps the run's own outputs from every student worker started from now on (see
        :func:`autograder.engine.reading.output_places`).

        Args:
            places: where the outputs are, each as the folder (or file) to hide.
            rewritten: those of ``places`` that are files the run writes anew while it grades (its ``--json``
                checkpoint where its folder cannot be hidden): without Landlock or a uid of its own, the worker's
                record says so (``outputs_readable``) and its level is ``minimal``.
        """
        self.hide(places)
        with self._lock:
            self._rewritten = list(dict.fromkeys(rewritten))

    def measure_isolation(self) -> IsolationRecord:
        """The isolation a student's worker obtains here (a throwaway sandboxed worker; no student code).

        Returns:
            Its ``isolation`` record (``level`` is ``full``, ``container`` or ``minimal``), or
            ``{"level": "minimal", "error": ...}`` when it could not be measured.
        """
        if not self.sandbox:
            return {"level": "minimal", "error": "the sandbox is off"}
        try:
            worker = self.start_worker("", os.devnull, "isolation")
        except Exception as err:  # noqa: BLE001 - reported, never raised
            return {"level": "minimal", "error": f"{type(err).__name__}: {err}"}
        worker.close()
        got = as_isolation_record(worker.status.get("isolation") or {"level": "minimal", "error": str(worker.status)})
        self.note_isolation(got)
        return got

    def scratch_id(self) -> int:
        """A number no other scratch folder of this run has (a worker's ``w<n>``, a source's ``src-<n>``)."""
        with self._lock:
            return next(self._scratch_ids)

    def note_isolation(self, got: Mapping[str, object]) -> None:
        """Keeps the weakest isolation any student worker of this run obtained (without what names one
        worker only: :func:`as_isolation_record`)."""
        from autograder.sandbox.isolate import level_at_least

        kept = as_isolation_record(got)
        with self._lock:
            if not self.isolation or not level_at_least(kept, str(self.isolation.get("level", "minimal"))):
                self.isolation = kept

