"""The grading engine: submissions x exercises -> results (GRADING.md's JSON).

Per (submission, exercise) a student worker loads the code in a sandbox;
each check of the hidden suite runs in this process and asks that worker
and the reference worker for probe results. A timeout or crash kills the
worker; the next check gets a fresh one. The reference runs in workers that
never see student code, and its results are cached per grading run (they
depend only on the run's seed).
"""

from __future__ import annotations

import importlib
import os
import secrets
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from autograder import (
    _compile_cache,
    _device,
    _envelope,
    _launch,
    _libraries,
    _loader,
    _loadguard,
    _quota,
    _registry,
    _status,
)
from autograder._paths import EXERCISES, ROOT, SOLUTIONS, private_dirs
from autograder._protocol import check_rng, probe_error, reference_key
from autograder._registry import JAX_ONLY
from autograder._suite import INTERNAL_ERROR, Check, Ctx, GraderBug, StudentProblem, Suite, result_of, run_check
from autograder._text import NAME_CHARS, clean
from autograder.messages import render

MAX_TIMEOUTS_PER_EXERCISE = 3
DEFAULT_MEM_BYTES = _envelope.DEFAULT_WORKER_BYTES  # a student worker's address-space cap with room to spare
# Seconds before a run's deadline at which what is still being graded is stopped (``ungraded``), so the
# results are written in time.
DEADLINE_MARGIN = 5.0


def load_suite(exercise: str) -> Suite:
    """The hidden suite of one exercise."""
    return importlib.import_module(f"autograder.hidden.{exercise}").suite


def exercise_checks(exercise: str, public_only: bool = False) -> list[Check]:
    """The checks a run grades of one exercise (the public ones only with ``public_only``)."""
    return [c for c in load_suite(exercise).checks if not public_only or not c.hidden]


# Shared with the notebook self-check (autograder/_public.py): one key, one rng, one verdict.
_key = reference_key
_probe_error = probe_error


def _hideable(path: str, tmp: str) -> list[str]:
    """What of a submission's place to hide from students: its folder (other students' work) if hiding
    it breaks nothing, else the submission itself."""
    path = os.path.abspath(path)
    parent = os.path.dirname(path)
    needed = [str(ROOT), tmp, sys.prefix, sys.base_prefix, os.path.expanduser("~")]
    if any(n == parent or n.startswith(parent.rstrip(os.sep) + os.sep) for n in needed):
        return [path]
    return [parent]


def schedule(exercises: list[str]) -> list[str]:
    """The order a submission's exercises are handed to the --jobs threads.

    JAX-only exercises first: their workers come from the zygote that imports the JAX stack only
    (``_launch.ZygotePair``), ready ~2 s before the full one, which meanwhile imports PyTorch.
    Within each group longest first, so no long exercise is left alone at the end while the other
    threads idle (wall time of one submission with --jobs 2: see benchmarks/). Costs are each
    exercise's ``META.cost`` (autograder/exercises/<exercise>/__init__.py).
    """
    return sorted(exercises, key=lambda ex: (ex not in JAX_ONLY, -_registry.cost(ex)))


CACHE_ENV = "TAPETRACE_JAX_CACHE"
CACHE_MAX_BYTES = 1 << 30  # pruned (oldest first) to half of this when a run starts above it


def jax_cache_dir(tmp: str) -> tuple[str | None, bool]:
    """The JAX compilation cache of a run: (directory or None, whether it is the run's own).

    By default it persists across runs in ``~/.cache/tapetrace/jax-compile``: programs that do not
    depend on the seed (dataset training, Flax inits, probe helpers) and every program of a re-run
    with the same ``--seed`` (``--resume``, a regrade) load instead of compiling. JAX keys entries by
    the program, its compile options, the XLA flags and the jax/jaxlib versions, so one directory
    serves every version and device. Only reference workers read and write it (trusted code); no
    student's worker can read it (0700, hidden by the sandbox): the grader lends it, one program at
    a time, only the programs it names by key (``_compile_cache``), and nothing a student sends is
    ever written there. Outside /tmp on purpose: a student's worker covers /tmp with a private tmpfs.

    ``TAPETRACE_JAX_CACHE=run`` gives each run a fresh directory (deleted at the end);
    ``TAPETRACE_JAX_CACHE=/some/dir`` puts the persistent one elsewhere; ``TAPETRACE_JAX_CACHE=off``
    keeps none (every worker compiles all it runs, and nothing is lent).
    """
    choice = os.environ.get(CACHE_ENV, "")
    if choice == "off":
        return None, False
    base = os.path.join(os.path.expanduser("~"), ".cache", "tapetrace")
    if choice != "run":
        path = choice or os.path.join(base, "jax-compile")
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
            _prune(path)
            return path, False
        except OSError:
            pass
    try:
        os.makedirs(base, exist_ok=True)
        return tempfile.mkdtemp(prefix="jax-", dir=base), True
    except OSError:
        return os.path.join(tmp, "jax-cache"), True


def _prune(path: str) -> None:
    """Keeps the persistent cache under :data:`CACHE_MAX_BYTES` (oldest entries go first)."""
    entries = []
    with os.scandir(path) as it:
        for e in it:
            if e.is_file(follow_symlinks=False):
                st = e.stat(follow_symlinks=False)
                entries.append((st.st_mtime, st.st_size, e.path))
    total = sum(size for _, size, _ in entries)
    if total <= CACHE_MAX_BYTES:
        return
    for _, size, p in sorted(entries):
        if total <= CACHE_MAX_BYTES // 2:
            break
        try:
            os.unlink(p)
            total -= size
        except OSError:
            pass


def read_all(paths: list[str], timeout: float) -> list[_loader.Submission | Exception]:
    """Every submission read in a child process under the reading budget (``_loadguard``), in order; a
    submission that cannot be read is its exception (its rows say why), never the end of the batch."""
    subs: list[_loader.Submission | Exception] = []
    with _loadguard.Reader(_loadguard.read_seconds(timeout)) as reader:
        for p in paths:
            try:
                subs.append(reader.load(p))
            except (_loader.SubmissionError, _loadguard.ReaderTrouble) as err:
                subs.append(err)
            except Exception as err:  # noqa: BLE001
                subs.append(_loader.SubmissionError(f"{type(err).__name__}: {err}"))
    return subs


def read_error(err: Exception) -> str | dict[str, Any]:
    """What an unreadable submission's rows say: a catalogued text over the reading budget (rendered in the
    run's language), else the loader's words."""
    if isinstance(err, _loadguard.ReadBudgetExceeded):
        return {"key": err.key, **err.fields}
    return str(err)
def _with_death(err: GraderBug, death: dict[str, Any] | None) -> GraderBug:
    """``err`` carrying how the reference's worker died (its stderr tail goes to the instructor's log)."""
    err.death = death  # type: ignore[attr-defined]
    return err


def _oom_words(death: dict[str, Any] | None) -> str:
    return " (killed by the kernel's OOM killer: the container's memory ran out)" if death and death.get("oom") else ""


def _call_words(call: str | dict[str, Any]) -> str:
    """A check's ``call`` for the instructor's log: code in backticks, or its label's English text."""
    if isinstance(call, str):
        return f"`{call}`"
    return render(str(call.get("key")), "en", **{k: v for k, v in call.items() if k != "key"})


class ReferenceBank:
    """Reference workers (one per exercise, never touched by student code) + cache."""

    def __init__(self, run: GradingRun) -> None:
        self._run = run
        self._workers: dict[str, _launch.Worker] = {}
        self._locks = {ex: threading.Lock() for ex in EXERCISES}
        self._cache: dict[str, Any] = {}

    def call(self, exercise: str, probe: str, kwargs: dict[str, Any]) -> Any:
        key = _key(exercise, probe, kwargs)
        if key in self._cache:
            return self._cache[key]
        with self._locks[exercise]:
            if key in self._cache:
                return self._cache[key]
            for _attempt in range(2):
                worker = self._workers.get(exercise)
                if worker is None or not worker.alive:
                    worker = self._run.start_worker(exercise, str(SOLUTIONS / f"{exercise}.py"), "reference")
                    if worker.status.get("status") != "loaded":
                        st = worker.status
                        raise _with_death(GraderBug(f"reference for {exercise} did not load: {st.get('code')} "
                                                    f"{st.get('fields', {})}{_oom_words(st.get('death'))}"),
                                          st.get("death"))
                    self._workers[exercise] = worker
                try:
                    resp = worker.call(probe, kwargs, self._run.timeout * 4)
                    break
                except _launch.WorkerDied as err:
                    self._workers.pop(exercise, None)
                    last = err
            else:
                raise _with_death(GraderBug(f"reference worker for {exercise} died: {last}{_oom_words(last.death)}"),
                                  last.death)
            if not resp.get("ok"):
                raise GraderBug(f"reference probe {probe} failed: {resp}")
            self._cache[key] = resp["value"]
            return resp["value"]

    def close(self) -> None:
        _launch.close_all(list(self._workers.values()))
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


class GradingCancelled(Exception):
    """The run was cancelled (Ctrl-C): no new worker starts."""


class DeadlineReached(GradingCancelled):
    """The run's deadline came: what is still being graded is ``ungraded``."""


class GradersTrouble(GraderBug):
    """A worker's death or start failure that may be the grader's (the container's memory, load, a start
    that failed): the exercise is graded again, alone; after that it is ``grader_error`` if still the grader's."""


class _TrackedLauncher:
    """A launcher that remembers the processes it started, so :meth:`GradingRun.cancel` can kill them.

    Workers live in their own sessions (a terminal's Ctrl-C never reaches them), so on an
    interrupt the grader must kill them itself, including ones still loading.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.kind = inner.kind
        self._procs: list[_launch.Proc] = []
        self._lock = threading.Lock()
        self._stopped = False  # after kill_all: a spawn still in flight is killed as soon as it returns

    @property
    def alive(self) -> bool:
        return getattr(self.inner, "alive", True)

    def spawn(self, spec: dict[str, Any], fds: tuple[int, int]) -> _launch.Proc:
        proc = self.inner.spawn(spec, fds)
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


class GradingRun:
    """One grading run: device, seed, launcher and reference bank shared by all submissions."""

    def __init__(self, *, device: str = "auto", timeout: float = 30.0, seed: int | None = None,
                 lang: str = "en", public_only: bool = False, launcher: str = "auto",
                 mem_bytes: int | None = None, sandbox: bool = True, debug: bool = False,
                 launch_prefix: list[str] | None = None, sandbox_skip: list[str] | None = None) -> None:
        self.device = _device.resolve(device)
        self.timeout = float(timeout)
        self.seed = int(seed) if seed is not None else secrets.randbelow(2**31)
        self.lang = lang
        self.public_only = public_only
        # the box (container limits) and the plan made from it: exercises at once, zygotes, caps (_envelope)
        self.envelope = _envelope.current()
        self.plan = _envelope.plan(self.envelope, fork=hasattr(os, "fork"))
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
        self.launcher = _TrackedLauncher(self._make_launcher(launcher))
        self.reference = ReferenceBank(self)
        self.libraries = _libraries.LibraryCheck(cpu_jax=self._cpu_jax)  # asked only after a load failed
        self.watch = _quota.ScratchWatch()  # students' workers' disk use, at every isolation level
        self.isolation: dict[str, Any] = {}
        self._hide: list[str] = []
        self._scratch_ids = iter(range(10**9))
        self._lock = threading.Lock()

    @property
    def _cpu_jax(self) -> bool:
        return self.device.get("jax", "cpu") == "cpu"

    def _make_launcher(self, kind: str) -> Any:
        prefix = self.launch_prefix
        if kind in ("auto", "zygote") and hasattr(os, "fork"):
            try:
                if kind == "auto" and self.plan.launcher == "zygote":  # tight memory: the full zygote alone
                    return _launch.ZygoteLauncher(cpu_jax=self._cpu_jax, prefix=prefix)
                return _launch.ZygotePair(cpu_jax=self._cpu_jax, prefix=prefix)
            except (RuntimeError, OSError):
                if kind == "zygote":
                    raise
        return _launch.SpawnLauncher(cpu_jax=self._cpu_jax, prefix=prefix)

    def start_worker(self, exercise: str, source_path: str, role: str,
                     hide_extra: list[str] | None = None) -> _launch.Worker:
        """Starts a worker for ``exercise`` loading ``source_path`` as ``role``."""
        if self._cancel.is_set():
            raise GradingCancelled("grading was cancelled")
        if self._expired.is_set():
            raise DeadlineReached("the run's deadline came")
        with self._lock:
            scratch = os.path.join(self.tmp, f"w{next(self._scratch_ids)}")
        os.makedirs(scratch, mode=0o700)
        # every student JAX worker asks the grader for its programs (answered with nothing where the run lends
        # none): the grader counts what it compiles (ExerciseGrading.observed)
        borrow = role == "student" and _registry.worker_needs(exercise) != "torch"
        lend = borrow and self.lender is not None
        spec: dict[str, Any] = {
            "exercise": exercise, "role": role, "source_path": source_path,
            "module_name": exercise, "device": self.device,
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
            spec["sandbox"] = self._sandbox_spec(scratch, hide_extra)
            if role == "student" and not self._mem_fixed and spec["needs"] != "torch":
                spec["sandbox"]["mem_bytes"] += self.plan.stacks()  # XLA's threads' stacks: reserved, untouched
        if getattr(self.launcher, "alive", True) is False:
            self.launcher = _TrackedLauncher(_launch.SpawnLauncher(cpu_jax=self._cpu_jax, prefix=self.launch_prefix))
        return _launch.Worker(self.launcher, spec, self.timeout, self.lender if lend else None,
                              watch=self.watch if role == "student" else None)

    def _sandbox_spec(self, scratch: str, hide_extra: list[str] | None) -> dict[str, Any]:
        """A student worker's sandbox: its scratch, limits, what it must not read, what it may."""
        with self._lock:
            # the compile cache too: its programs are lent by key only (_compile_cache), never read
            cache = [self.jax_cache] if self.jax_cache else []
            hide = [*private_dirs(), self.tmp, *cache, *self._hide, *(hide_extra or [])]
        return {"scratch": scratch, "mem_bytes": self.mem_bytes, "fsize_bytes": _quota.FILE_BYTES,
                "hide": list(dict.fromkeys(hide)), "read": [],
                "network": False, "skip": self.sandbox_skip}

    def hide(self, places: Any) -> None:
        """Keeps ``places`` (paths) from every student worker started from now on: other submissions."""
        with self._lock:
            self._hide = list(dict.fromkeys([*self._hide, *places]))

    def measure_isolation(self) -> dict[str, Any]:
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
        got = dict(worker.status.get("isolation") or {"level": "minimal", "error": str(worker.status)})
        got.pop("pids_cgroup", None)  # names that one worker only
        self._note_isolation(got)
        return got

    def _note_isolation(self, got: dict[str, Any]) -> None:
        """Keeps the weakest isolation any student worker of this run obtained (without what names one
        worker only: its pids cgroup)."""
        from autograder._sandbox import level_at_least

        got = {k: v for k, v in got.items() if k != "pids_cgroup"}
        with self._lock:
            if not self.isolation or not level_at_least(got, str(self.isolation.get("level", "minimal"))):
                self.isolation = dict(got)

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
    def grade_exercise(self, sub: _loader.Submission, exercise: str, final: bool | None = None) -> dict[str, Any]:
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
            The exercise's row (GRADING.md); ``ungraded`` when the run's deadline cut it short.
        """
        if final is None:
            final = getattr(self._attempts, "final", True)
        self._enter(exercise)
        try:
            grading = ExerciseGrading(self, sub, exercise, final=final)
            try:
                res = grading.open()
                if res is None:
                    try:
                        for check in grading.checks:
                            grading.run(check)
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

    def _deadline_row(self, exercise: str) -> dict[str, Any]:
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
              on_result: Callable[[dict[str, Any]], None] | None = None,
              on_task: Callable[[int, str], None] | None = None,
              exercises_for: dict[str, list[str]] | None = None,
              deadline: float | None = None) -> list[dict[str, Any]]:
        """Grades submissions; one result object per path, in order, none dropped.

        ``on_result(result)`` is called once per finished submission, ``on_task(index,
        exercise)`` once per finished (submission, exercise); both from grading threads.
        ``exercises_for`` narrows what one path grades (``--resume``: only the exercises the grader
        could not grade before); a path it does not name grades ``only``.

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
        exercises = [e for e in EXERCISES if not only or e in only]
        wanted = [[e for e in exercises if e in (exercises_for or {}).get(p, exercises)] for p in paths]
        subs = read_all(paths, self.timeout)
        self.hide(h for p in paths for h in _hideable(p, self.tmp))
        if self.sandbox and not self.isolation:  # recorded from the start: a row without student code has it too
            self.measure_isolation()
        results: list[dict[str, Any]] = [self._empty(p) for p in paths]
        pending = {i: len(wanted[i]) for i in range(len(paths))}
        done_lock = threading.Lock()
        again: list[tuple[int, str, str]] = []  # (submission, exercise, why): graded again, alone, at the end

        def record(i: int, ex: str, res: dict[str, Any]) -> None:
            with done_lock:
                results[i]["exercises"][ex] = res
                pending[i] -= 1
                if on_task:
                    on_task(i, ex)
                if pending[i] == 0:
                    self._finish(results[i], wanted[i])
                    if on_result:
                        on_result(results[i])

        def attempt(i: int, ex: str, final: bool) -> dict[str, Any]:
            sub = subs[i]
            try:
                if self._expired.is_set():
                    return self._deadline_row(ex)
                if isinstance(sub, _loadguard.ReaderTrouble):
                    return self.graders_row(ex, "grader_error", str(sub))
                if isinstance(sub, Exception):
                    return self._unreadable(ex, read_error(sub), status=getattr(sub, "status", "unreadable"))
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
            if self._cancel.is_set():
                return  # its workers were killed mid-way: the result would be wrong, drop it
            if res.get("retry"):
                with done_lock:
                    again.append((i, ex, str(res["retry"])))
                return
            record(i, ex, res)

        order = [(i, ex) for i in range(len(paths)) for ex in schedule(wanted[i])]
        # The main thread only waits, so Ctrl-C lands here (never inside a check) and
        # cancels at once instead of waiting for the tasks in flight.
        pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="tapetrace-grade")
        alone = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tapetrace-grade")
        try:
            for fut in [pool.submit(task, i, ex) for i, ex in order]:
                fut.result()
            pool.shutdown()
            # the second attempts: one at a time, with every other exercise's reference worker closed
            for i, ex, why in sorted(again):
                if self._cancel.is_set():
                    break
                self.reference.retire_all_but(ex)
                res = alone.submit(attempt, i, ex, True).result()
                if self._cancel.is_set():
                    break
                note = f"first attempt: {why}; graded again alone"
                res["instructor_log"] = [note, *res.get("instructor_log", [])]
                record(i, ex, res)
            alone.shutdown()
        except BaseException:
            self.cancel()
            pool.shutdown(wait=False, cancel_futures=True)
            alone.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            if timer is not None:
                timer.cancel()
        for i, r in enumerate(results):
            if not wanted[i]:
                self._finish(r, wanted[i])
                if on_result:
                    on_result(r)
        return results

    def _empty(self, path: str) -> dict[str, Any]:
        return {"submission": path, "device": dict(self.device), "seed": self.seed,
                "total": 0.0, "max_total": 0.0, "exercises": {}}

    def graders_row(self, exercise: str, status: str, reason: str) -> dict[str, Any]:
        """A row the student's code did not earn (``grader_error`` or ``ungraded``; see ``_status``)."""
        return _status.grader_row(exercise_checks(exercise, self.public_only), status, reason, lang=self.lang)

    def _unreadable(self, exercise: str, error: str | dict[str, Any], status: str = "unreadable",
                    key: str = "UNREADABLE") -> dict[str, Any]:
        checks = exercise_checks(exercise, self.public_only)
        # it may quote file names the student chose; a dict is a catalogued text (read_error)
        msg = render(key, self.lang, error=clean(error) if isinstance(error, str) else error)
        return {"score": 0.0, "max_score": float(sum(c.points for c in checks)), "status": status,
                "message": msg, "seconds": 0.0,
                "tests": [{"name": c.name, "score": 0.0, "max_score": c.points, "passed": False,
                           "hidden": c.hidden, "message": msg, "code": key} for c in checks]}

    def _finish(self, res: dict[str, Any], exercises: list[str]) -> None:
        res["exercises"] = {ex: res["exercises"][ex] for ex in exercises if ex in res["exercises"]}
        res["total"] = round(sum(e["score"] for e in res["exercises"].values()), 6)
        res["max_total"] = round(sum(e["max_score"] for e in res["exercises"].values()), 6)
        res["precision"] = dict(_device.PRECISION)
        res["isolation"] = dict(self.isolation)
        res["launcher"] = self.launcher.kind
        if getattr(self, "envelope", None) is not None:  # (a Dask cluster's rows come from its workers)
            res["envelope"] = _envelope.as_json(self.envelope, self.plan, self.jobs)
        from autograder import _verdict_fp

        _verdict_fp.stamp(res, getattr(self, "public_only", False))  # what decides each verdict (regrade)


class ExerciseGrading:
    """One exercise of one submission being graded: its student worker, its checks' contexts and results.

    :meth:`GradingRun.grade_exercise` is :meth:`open`, :meth:`run` for each of :attr:`checks`,
    :meth:`close` and :meth:`summary`; the pytest plugin (``autograder/pytest_plugin.py``) drives the
    same steps one check per test item, running the verdict in its own frame (:meth:`refusal`,
    :meth:`ctx`, then :meth:`record`).

    Args:
        run: the grading run (device, seed, timeout, launcher, reference bank).
        sub: the loaded submission.
        exercise: the exercise's name, e.g. ``"ex05_jit_train_step"``.
    """

    def __init__(self, run: GradingRun, sub: _loader.Submission, exercise: str, final: bool = True) -> None:
        self._t0 = time.monotonic()
        self.final = final
        self.retry: str | None = None  # (not final) why this attempt stopped: graded again, alone
        self.trouble: str | None = None  # the grader's trouble met (its reason, for grader_reason)
        self.log: list[str] = []  # for the instructor: how workers died, their stderr tails
        self.grading_run = run
        self.sub = sub
        self.exercise = exercise
        self.lang = run.lang
        suite = load_suite(exercise)
        self.checks: list[Check] = [c for c in suite.checks if not run.public_only or not c.hidden]
        self.max_score = float(sum(c.points for c in self.checks))
        self.tests: list[dict[str, Any]] = []
        self.timeouts = 0
        self._worker: _launch.Worker | None = None
        self._src_path = ""
        self._hide: list[str] = []
        self._observed: dict[str, int] | None = None

    def _result(self, status: str, tests: list[dict[str, Any]], message: str) -> dict[str, Any]:
        out = {"score": float(sum(t["score"] for t in tests)), "max_score": self.max_score,
               "status": status, "message": message, "tests": tests,
               "seconds": round(time.monotonic() - self._t0, 3)}
        if self.log:
            out["instructor_log"] = list(self.log)
        return out

    # ----------------------------------------------------------- the grader's trouble or the student's
    def death_trouble(self, death: dict[str, Any] | None, what: str) -> str | None:
        """Whether a student's worker that died (``death``: ``_launch.Worker.death``) is the grader's trouble.

        The rules (README, "Whose trouble"): a worker the kernel's OOM killer took (SIGKILL while its
        OOM-kill counter rose) is the grader's: the worker stayed under its own memory cap (beyond it, the
        student's code gets a MemoryError), so the container's memory ran out for the grader's sake. Any
        other death, on a first attempt, may be the machine's (a signal under load, a worker that could not
        start): the exercise is graded again, alone; on that second attempt the same death is the student's.

        Returns:
            The reason (for ``grader_reason``), or None when the death is the student's.
        """
        if death is None:
            return None
        self._note_death(death, what)
        env = self.grading_run.envelope
        if death.get("oom"):
            limit = (f"the container's memory limit ({env.memory_bytes / 2**20:.0f} MiB)" if env.memory_bytes
                     else f"the machine's memory ({env.usable_memory / 2**30:.1f} GiB)")
            return (f"{what}: the student's worker was killed by the kernel's OOM killer while under its own memory "
                    f"cap: {limit} ran out; raise it, or grade with fewer --jobs")
        if not self.final:
            return f"{what}: the student's worker died ({death.get('how')})"
        return None

    def _note_death(self, death: dict[str, Any], what: str) -> None:
        """Keeps how a worker died and its stderr tail for the instructor (``instructor_log``, never a student's)."""
        tail = str(death.get("stderr") or "").strip()
        oom = " (the OOM killer's)" if death.get("oom") else ""
        self.log.append(_status.clean_reason(f"{what}: worker died, {death.get('how')}{oom}"
                                             + (f"; its stderr:\n{tail}" if tail else ""), limit=8000))

    def graders_trouble(self, reason: str) -> dict[str, Any]:
        """The row of an exercise stopped by the grader's trouble: marked ``retry`` on a first attempt
        (graded again, alone), else ``grader_error``."""
        self.trouble = self.trouble or reason
        row = self.grading_run.graders_row(self.exercise, "grader_error", reason)
        if self.log:
            row["instructor_log"] = list(self.log)
        if not self.final:
            self.retry = reason
            row["retry"] = reason
        return row

    def _zero(self, status: str, message: str, code: str) -> dict[str, Any]:
        tests = [{"name": c.name, "score": 0.0, "max_score": c.points, "passed": False,
                  "hidden": c.hidden, "message": message, "code": code} for c in self.checks]
        return self._result(status, tests, message)

    def open(self) -> dict[str, Any] | None:
        """Writes the student's source to a private scratch and loads it in a sandboxed worker.

        Returns:
            None when the exercise loaded (its checks can run), else the exercise's final result,
            every check at 0 with the reason: refused file, missing file, grader error, or the
            load's failure (syntax, exception, timeout... with its status).
        """
        run, exercise = self.grading_run, self.exercise
        if exercise in self.sub.refused:
            name, kind = self.sub.refused[exercise]
            if kind in ("FILE_TOO_LARGE", "FILE_UNREADABLE"):  # this exercise's file only: the others are graded
                msg = render(kind, self.lang, name=clean(name, NAME_CHARS),
                             limit=f"{_loader.MAX_SOURCE_BYTES // 1024**2} MB")
                return self._zero("unreadable", msg, kind)
            msg = render("REFUSED_FILE", self.lang, name=clean(name, NAME_CHARS), what=render(kind, self.lang))
            return self._zero("error", msg, "REFUSED_FILE")
        source = self.sub.sources.get(exercise)
        if source is None:
            msg = render("MISSING_FILE", self.lang, exercise=exercise)
            return self._zero("missing", msg, "MISSING_FILE")
        scratch_src = os.path.join(run.tmp, f"src-{next(run._scratch_ids)}")
        os.makedirs(scratch_src, mode=0o700)  # other students' workers must not read it
        self._src_path = os.path.join(scratch_src, f"{exercise}.py")
        with open(self._src_path, "w", encoding="utf-8") as fh:
            fh.write(source)
        self._hide = _hideable(self.sub.path, run.tmp)
        # Load once up front: load failures decide the exercise's status.
        try:
            first = run.start_worker(exercise, self._src_path, "student", self._hide)
        except GradingCancelled:
            raise
        except Exception as err:  # noqa: BLE001 - the run goes on; no worker is the grader's trouble
            return self.graders_trouble(clean(f"no worker could start: {type(err).__name__}: {err}"))
        st = first.status
        if first.isolation:  # sent by the sandbox before the student's code ran; the code's own word never counts
            run._note_isolation(first.isolation)
        # a library the reference needs that the grader's environment cannot import: the grader's trouble
        missing = run.libraries.trouble(exercise) if _libraries.may_be_missing_library(st) else None
        trouble = missing or self.death_trouble(st.get("death"), "loading the submission's code")
        if trouble:
            first.close()
            return self.graders_trouble(trouble)
        if st.get("status") != "loaded":
            status = st.get("status", "crashed")
            msg = render(st.get("code", "LOAD_CRASHED"), self.lang, **st.get("fields", {}))
            first.close()
            return self._zero(status, msg, st.get("code", "LOAD_CRASHED"))
        self._worker = first
        return None

    def _student_call(self, probe: str, call: str | dict[str, Any], scale: float, kwargs: dict[str, Any]) -> Any:
        run = self.grading_run
        worker = self._worker
        if worker is None or not worker.alive:
            worker = run.start_worker(self.exercise, self._src_path, "student", self._hide)
            self._worker = worker
            st = worker.status
            self._raise_if_graders(st.get("death"), "loading the submission's code again")
            if st.get("status") != "loaded":
                raise StudentProblem(st.get("code", "LOAD_CRASHED"), **st.get("fields", {}))
        self._observed = None
        try:
            resp = worker.call(probe, kwargs, run.timeout * scale)
            self._observed = self._observation(worker)
        except _launch.WorkerDied as err:
            if err.kind == "timeout":
                self.timeouts += 1
                raise StudentProblem("CALL_TIMEOUT", call=call, timeout=run.timeout * scale) from None
            if err.kind == "broken":
                raise StudentProblem("WORKER_PROTOCOL", how=err.how) from None
            if err.kind == "limit":
                raise StudentProblem(err.how, **_quota.describe()) from None
            self._raise_if_graders(err.death, _call_words(call))
            raise StudentProblem("CALL_CRASHED", call=call, how=err.how) from None
        if resp.get("ok"):
            return resp["value"]
        raise _probe_error(resp, call, run.mem_bytes)

    @staticmethod
    def _observation(worker: _launch.Worker) -> dict[str, int] | None:
        """What the grader saw of a worker's last call: ``{"programs": n, "distinct": k}``, the
        compiled programs it asked for (None: a worker that asks for none, e.g. PyTorch's)."""
        if not worker.borrows:  # what the grader asked of it, never what its status says
            return None
        return {"programs": len(worker.asked), "distinct": len(set(worker.asked))}

    def observed(self) -> dict[str, int] | None:
        """:meth:`_observation` of the student's last probe call (None before one answered)."""
        return self._observed

    def _raise_if_graders(self, death: dict[str, Any] | None, what: str) -> None:
        """Raises :class:`GradersTrouble` when a death is (or, on a first attempt, may be) the grader's."""
        trouble = self.death_trouble(death, what)
        if trouble:
            self.trouble = self.trouble or trouble
            raise GradersTrouble(trouble)

    def _reference_call(self, probe: str, kwargs: dict[str, Any]) -> Any:
        try:
            return self.grading_run.reference.call(self.exercise, probe, kwargs)
        except GraderBug as err:
            death = getattr(err, "death", None)
            if death:
                self._note_death(death, f"the reference's probe {probe}")
            self.trouble = self.trouble or f"the reference: {err}"
            raise

    def ctx(self, check: Check) -> Ctx:
        """The context of one check: its seeded rng, the student's worker (timeouts scaled), the reference."""
        run = self.grading_run
        return Ctx(rng=check_rng(run.seed, self.exercise, check.name), seed=run.seed, device=run.device,
                   student=lambda p, c, s, kw, _scale=check.timeout_scale: self._student_call(p, c, s * _scale, kw),
                   reference=self._reference_call, observed=self.observed)

    def refusal(self, check: Check) -> tuple[str, dict[str, Any]] | None:
        """Why ``check`` must not run now (``(key, fields)``: a device it needs, the spent timeout budget), or None."""
        run = self.grading_run
        if check.needs and not _device.satisfies(run.device, check.needs):
            return "NOT_ON_DEVICE", {"device": _device.describe(run.device), "needs": check.needs}
        if self.timeouts >= MAX_TIMEOUTS_PER_EXERCISE:
            return "BUDGET_EXHAUSTED", {"budget": run.timeout * MAX_TIMEOUTS_PER_EXERCISE}
        return None

    def record(self, check: Check, error: BaseException | None,
               skip: tuple[str, dict[str, Any]] | None = None) -> dict[str, Any]:
        """Keeps the result of a check that ended with ``error`` (None: it passed) or was refused (``skip``)."""
        test = result_of(check, error, lang=self.lang, skip=skip)
        self.tests.append(test)
        return test

    def run(self, check: Check) -> dict[str, Any]:
        """Runs one check (after :meth:`open` returned None) and keeps its result; never raises."""
        skip = self.refusal(check)
        if skip is not None:
            return self.record(check, None, skip)
        test = run_check(check, self.ctx(check), lang=self.lang)
        self.tests.append(test)
        if test["code"] == INTERNAL_ERROR and not self.final:  # maybe the grader's trouble: again, alone
            self.retry = self.trouble or f"{check.name}: {test['message']}"
        return test

    def close(self) -> None:
        """Stops the student's worker (idempotent)."""
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    def summary(self) -> dict[str, Any]:
        """The exercise's result (GRADING.md) from the checks run so far: status ``graded``."""
        tests = self.tests
        broken = [t for t in tests if t["code"] == INTERNAL_ERROR]
        if broken:  # a check (or the reference) failed on the grader's side: no verdict is a grade
            return self.graders_trouble(self.trouble or f"{broken[0]['name']}: {broken[0]['message']}")
        failed = [t for t in tests if not t["passed"]]
        if failed and all(t["code"] == "NOT_ATTEMPTED" for t in failed) and len(failed) == len(tests):
            message = render("EXERCISE_NOT_ATTEMPTED", self.lang)
        else:
            message = failed[0]["message"] if failed else ""
        return self._result("graded", tests, message)
