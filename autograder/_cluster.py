"""Grading on a Dask distributed cluster (``grade --cluster local:N`` / ``--scheduler ADDRESS``).

Dask (``pip install 'tapetrace[cluster]'``) is imported only here and only when asked for:
local grading never needs it.

- **One warm grading run per Dask worker.** :class:`GradingPlugin` (a ``WorkerPlugin``) starts a
  :class:`~autograder._engine.GradingRun` in its ``setup`` (zygote, reference bank, JAX compile
  cache for this run's seed, device and timeout) and closes it in ``teardown``. Workers started by
  a nanny are spawned processes, so each zygote forks inside its own worker, never across a live
  JAX runtime. A worker with several threads grades that many tasks at once on its run, as
  ``--jobs`` does in one process.
- **Tasks are (submission, exercise) pairs** carrying the exercise's source text: the client's
  loader (the one way in, ``_loader.load``) reads every submission, so workers need no shared
  filesystem and never parse a notebook or a zip. Submissions are read lazily and only as many
  tasks are in flight as the workers have threads, so 10,000 submissions never sit in memory at
  once and a dying worker holds only the task it runs.
- **A worker that dies loses nothing.** Dask reschedules the tasks it held on other workers;
  a task whose workers died ``distributed.scheduler.allowed-failures`` + 1 times (default 3 + 1)
  fails with ``KilledWorker`` and becomes a grader-error row for that exercise, so every
  submission still gets every row.
- **Same results.** Rows are made by the engine's own functions (``grade_exercise`` on the worker;
  the run's ``_empty``/``_finish``/``_unreadable`` here), so the JSON, CSV, feedback, progress and
  ``--resume`` of ``cmd_grade`` work unchanged.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import logging
import os
import re
import secrets
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from autograder import _engine, _loader, _loadguard
from autograder._engine import GradingRun, read_error, schedule
from autograder._paths import EXERCISES

EXTRA = "pip install 'tapetrace[cluster]'"
_SPEC = re.compile(r"^local:(\d+)$")
_RUN_LOCK = threading.Lock()


class ClusterError(RuntimeError):
    """The cluster cannot be used (Dask missing, bad ``--cluster``, unreachable scheduler)."""


def parse_cluster(spec: str) -> int:
    """``"local:N"`` -> N (worker processes).

    Raises:
        ClusterError: anything else.
    """
    m = _SPEC.match(spec.strip())
    if not m or int(m.group(1)) < 1:
        raise ClusterError(f"--cluster {spec!r}: expected local:N with N >= 1 worker processes "
                           "(for a cluster elsewhere, start it and pass --scheduler ADDRESS)")
    return int(m.group(1))


def check_args(cluster: str | None, scheduler: str | None) -> str | None:
    """Why ``--cluster``/``--scheduler`` cannot be used here, or None (checked before grading)."""
    if cluster is None and scheduler is None:
        return None
    if cluster is not None:
        try:
            parse_cluster(cluster)
        except ClusterError as err:
            return str(err)
    if scheduler is not None and not scheduler.strip():
        return "--scheduler: empty address"
    if importlib.util.find_spec("distributed") is None:
        flag = "--cluster" if cluster is not None else "--scheduler"
        return f"{flag} needs Dask distributed, which is not installed: {EXTRA}"
    return None


def factory(cluster: str | None, scheduler: str | None) -> Callable[..., ClusterRun]:
    """A constructor taking :class:`GradingRun`'s keyword arguments (the CLI passes its own)."""
    return functools.partial(ClusterRun, cluster=cluster, scheduler=scheduler)


# ------------------------------------------------------------------- workers
class GradingPlugin:
    """Keeps one :class:`GradingRun` per Dask worker (a ``distributed.WorkerPlugin``).

    Subclassing is done lazily (:func:`_plugin_class`) so that this module imports without Dask.
    """

    def __init__(self, run_kwargs: dict[str, Any], name: str) -> None:
        self.run_kwargs = dict(run_kwargs)
        self.name = name
        self.run: GradingRun | None = None

    def get_run(self) -> GradingRun:
        """This worker's run, started on first use (``setup`` normally did it)."""
        with _RUN_LOCK:
            if self.run is None:
                self.run = GradingRun(**self.run_kwargs)
            return self.run

    async def setup(self, worker: Any) -> None:
        # off the worker's event loop: starting the zygote takes seconds, heartbeats must go on
        await asyncio.get_running_loop().run_in_executor(None, self.get_run)

    def teardown(self, worker: Any) -> None:
        with _RUN_LOCK:
            run, self.run = self.run, None
        if run is not None:
            run.cancel()
            run.close()


@functools.cache
def _plugin_class() -> type:
    from distributed import WorkerPlugin

    return type("TapetraceGradingPlugin", (GradingPlugin, WorkerPlugin), {"__module__": __name__})


def __getattr__(name: str) -> Any:  # pickles name the plugin class by module attribute
    if name == "TapetraceGradingPlugin":
        return _plugin_class()
    raise AttributeError(name)


MAX_HIDE = 256


def hide_list(paths: list[str]) -> list[str]:
    """The places to keep from every student worker: as ``GradingRun.grade`` computes them, for the client.

    Usually one folder (the submissions' common one); [] past :data:`MAX_HIDE` places, where each
    task still hides its own submission's place (``grade_exercise``).
    """
    hideable = _engine._hideable
    tmp = os.path.join(tempfile.gettempdir(), "tapetrace-run-")  # where a worker's run keeps its scratch
    places = sorted({h for p in paths for h in hideable(os.path.abspath(p), tmp)})
    return places if len(places) <= MAX_HIDE else []


def _hide_everywhere(run: GradingRun, places: list[str]) -> None:
    """Keeps ``places`` from every student worker of ``run`` (as ``GradingRun.grade`` does for its paths)."""
    run.hide(places)


def grade_task(plugin: str, path: str, form: str, exercise: str, source: str | None,
               hide: list[str] | None = None, refused: tuple[str, str] | None = None) -> dict[str, Any]:
    """Runs on a Dask worker: grades one exercise of one submission with the worker's run.

    Args:
        plugin: the name the run's :class:`GradingPlugin` was registered under.
        path: the submission's absolute path on the client (only used to hide its folder from the
            student's process where the worker shares that filesystem).
        form: the submission's form (``directory``, ``notebook``, ``zip``, ...).
        exercise: the exercise to grade.
        source: the exercise's source text as the client's loader read it (None: no such file).
        hide: :func:`hide_list` of the run's submissions, kept from every student worker (where
            the worker shares the client's filesystem; elsewhere they do not exist).
        refused: ``(file name, kind)`` when the loader refused or could not read the exercise's file.

    Returns:
        ``{"result": exercise result (GradingRun.grade_exercise's), "isolation", "launcher",
        "device"}``.
    """
    from distributed import get_worker

    holder = get_worker().plugins.get(plugin)
    if holder is None:
        raise RuntimeError(f"this Dask worker has no tapetrace run {plugin} (did its set-up fail?)")
    run = holder.get_run()
    try:
        if hide:
            _hide_everywhere(run, hide)
        res = run.grade_exercise(_loader.Submission(path, {exercise: source}, form,
                                                    {exercise: tuple(refused)} if refused else {}), exercise)
    except Exception as err:  # noqa: BLE001 - nothing lost (GradingRun.grade does the same)
        res = run.graders_row(exercise, "grader_error", f"internal error: {type(err).__name__}: {err}")
    return {"result": res, "isolation": dict(run.isolation), "launcher": run.launcher.kind,
            "device": dict(run.device)}


def _worker_info(dask_worker: Any, plugin: str) -> dict[str, Any]:
    """What a worker's run resolved: its devices and launcher kind (run on each worker)."""
    holder = dask_worker.plugins.get(plugin)
    if holder is None:
        return {}
    run = holder.get_run()
    return {"device": dict(run.device), "launcher": run.launcher.kind}


def _worker_isolation(dask_worker: Any, plugin: str) -> dict[str, Any]:
    """What a student's worker obtains on this Dask worker (run on each worker)."""
    holder = dask_worker.plugins.get(plugin)
    measure = getattr(holder.get_run(), "measure_isolation", None) if holder is not None else None
    return dict(measure()) if measure is not None else {}


# -------------------------------------------------------------------- client
class _Kind:
    def __init__(self, kind: str) -> None:
        self.kind = kind


class ClusterRun:
    """A grading run whose (submission, exercise) tasks run on a Dask cluster.

    Has the interface of :class:`GradingRun` that ``cmd_grade`` uses (``grade``, ``cancel``,
    ``close``, ``seed``); every keyword argument of :class:`GradingRun` is passed on to the runs the
    workers keep. The device is resolved on the workers (a login node without a GPU can drive GPU
    workers).
    """

    def __init__(self, *, cluster: str | None = None, scheduler: str | None = None, window: int | None = None,
                 allowed_failures: int | None = None, connect_timeout: float | str | None = None,
                 **run_kwargs: Any) -> None:
        if (cluster is None) == (scheduler is None):
            raise ClusterError("give one of --cluster local:N and --scheduler ADDRESS")
        why = check_args(cluster, scheduler)
        if why:
            raise ClusterError(why)
        import dask
        from distributed import Client, LocalCluster

        if connect_timeout is None:  # DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT, 30 s by default
            connect_timeout = dask.config.get("distributed.comm.timeouts.connect")
        if run_kwargs.get("seed") is None:
            run_kwargs["seed"] = secrets.randbelow(2**31)  # one seed for every worker's run
        self.seed = int(run_kwargs["seed"])
        self.lang = run_kwargs.get("lang", "en")
        self.public_only = bool(run_kwargs.get("public_only", False))
        self.timeout = float(run_kwargs.get("timeout", 30.0))  # the reading budget follows it (_loadguard)
        self.device: dict[str, str] = {}
        self.isolation: dict[str, Any] = {}
        self.launcher = _Kind(str(run_kwargs.get("launcher", "auto")))
        self.window = window
        self._threads, self._threads_at = 0, float("-inf")
        self._cluster: Any = None
        self._futures: set[Any] = set()
        self._cancelled = threading.Event()
        self.plugin_name = f"tapetrace-run-{secrets.token_hex(6)}"
        self.client: Any = None
        try:
            if cluster is not None:
                # tasks last seconds: a worker holds only the one it runs (a death then costs one task)
                config: dict[str, Any] = {"distributed.scheduler.worker-saturation": 1.0}
                if allowed_failures is not None:
                    config["distributed.scheduler.allowed-failures"] = allowed_failures
                with dask.config.set(config):
                    self._cluster = LocalCluster(n_workers=parse_cluster(cluster), threads_per_worker=1,
                                                 processes=True, dashboard_address=None,
                                                 silence_logs=logging.ERROR)
                self.client = Client(self._cluster)
            elif os.path.isfile(scheduler or ""):
                self.client = Client(scheduler_file=scheduler, timeout=connect_timeout)
            else:
                self.client = Client(scheduler, timeout=connect_timeout)
        except (OSError, TimeoutError, ValueError) as err:
            self.close()
            raise ClusterError(f"cannot reach the Dask scheduler {scheduler or cluster}: "
                               f"{str(err).splitlines()[0] if str(err) else type(err).__name__}") from None
        plugin = _plugin_class()(run_kwargs, self.plugin_name)
        try:
            self.client.register_plugin(plugin, name=self.plugin_name)  # setup() on every worker, now and later
            infos = [d for d in self.client.run(_worker_info, plugin=self.plugin_name).values() if d]
        except BaseException:
            self.close()
            raise
        if infos:  # before any task returns (rows of unreadable submissions need them)
            self.device, self.launcher.kind = infos[0]["device"], infos[0]["launcher"]

    def measure_isolation(self) -> dict[str, Any]:
        """The weakest isolation a student's worker obtains on the workers there are now.

        Workers that join later record theirs in the results they grade (``isolation``).
        """
        from autograder._sandbox import LEVELS

        found = [v for v in self.client.run(_worker_isolation, plugin=self.plugin_name).values() if v]
        if not found:
            return {"level": "minimal", "error": "no Dask worker could measure it yet"}
        weakest = min(found, key=lambda v: LEVELS.index(v["level"]) if v.get("level") in LEVELS else 0)
        self.isolation = dict(weakest)
        return dict(weakest)

    # ---------------------------------------------------------------- grading
    def grade(self, paths: list[str], only: list[str] | None = None, jobs: int = 1,
              on_result: Callable[[dict[str, Any]], None] | None = None,
              on_task: Callable[[int, str], None] | None = None,
              exercises_for: dict[str, list[str]] | None = None) -> list[dict[str, Any]]:
        """Grades submissions on the cluster; one result object per path, in order, none dropped.

        Same contract as :meth:`GradingRun.grade` (``jobs`` is the cluster's: its workers'
        threads). Callbacks are called from this thread.
        """
        from distributed import as_completed

        exercises = [e for e in EXERCISES if not only or e in only]
        wanted = [[e for e in exercises if e in (exercises_for or {}).get(p, exercises)] for p in paths]
        results: list[dict[str, Any] | None] = [None] * len(paths)
        pending = {i: len(wanted[i]) for i in range(len(paths))}

        def record(i: int, ex: str, res: dict[str, Any]) -> None:
            if results[i] is None:
                results[i] = GradingRun._empty(self, paths[i])  # type: ignore[arg-type]
            row = results[i]
            assert row is not None
            row["exercises"][ex] = res
            pending[i] -= 1
            if on_task:
                on_task(i, ex)
            if pending[i] == 0:
                GradingRun._finish(self, row, wanted[i])  # type: ignore[arg-type]
                if on_result:
                    on_result(row)

        todo = self._tasks(paths, wanted, record)
        running = as_completed()
        where: dict[Any, tuple[int, str]] = {}

        def submit_more() -> None:
            while len(where) < self._window() and not self._cancelled.is_set():
                item = next(todo, None)
                if item is None:
                    return
                i, ex, args = item
                fut = self.client.submit(grade_task, self.plugin_name, *args, key=f"tapetrace-{ex}-{i}-"
                                         f"{secrets.token_hex(4)}", pure=False, retries=2)
                where[fut] = (i, ex)
                self._futures.add(fut)
                running.add(fut)

        try:
            submit_more()
            for fut in running:
                i, ex = where.pop(fut)
                self._futures.discard(fut)
                if self._cancelled.is_set():
                    break
                record(i, ex, self._outcome(fut, ex))
                fut.release()
                submit_more()
        except BaseException:
            self.cancel()
            raise
        for i, p in enumerate(paths):
            if not wanted[i]:
                results[i] = GradingRun._empty(self, p)  # type: ignore[arg-type]
                GradingRun._finish(self, results[i], wanted[i])  # type: ignore[arg-type]
                if on_result:
                    on_result(results[i])
        return [r for r in results if r is not None]

    def _window(self) -> int:
        """How many tasks may be in flight: one per worker thread (re-read as workers come and go).

        Only as many as can run: the scheduler never parks a task on a busy worker (so a worker
        that dies holds just the task it runs, and a worker that joins gets work at once), and
        queued submissions stay in the client, read lazily.
        """
        if self.window:
            return self.window
        now = time.monotonic()
        if now - self._threads_at > 1.0:
            self._threads = sum(self.client.nthreads().values())
            self._threads_at = now
        return max(1, self._threads)

    def _tasks(self, paths: list[str], wanted: list[list[str]],
               record: Callable[[int, str, dict[str, Any]], None]) -> Iterator[tuple[int, str, tuple]]:
        """Reads each submission when its first task is due; unreadable ones are rows at once."""
        hide = hide_list(paths)  # no student worker may read any submission
        with _loadguard.Reader(_loadguard.read_seconds(self.timeout)) as reader:  # as GradingRun.grade reads
            for i, p in enumerate(paths):
                order = schedule(wanted[i])
                if not order:
                    continue
                try:
                    sub = reader.load(p)
                except Exception as err:  # noqa: BLE001 - GradingRun.grade does the same
                    error = read_error(err) if isinstance(err, _loader.SubmissionError) \
                        else f"{type(err).__name__}: {err}"
                    for ex in order:
                        record(i, ex, GradingRun._unreadable(self, ex, error,  # type: ignore[arg-type]
                                                             status=getattr(err, "status", "unreadable")))
                    continue
                where = os.path.abspath(p)
                for ex in order:
                    yield i, ex, (where, sub.form, ex, sub.sources.get(ex), hide, sub.refused.get(ex))

    def _outcome(self, fut: Any, exercise: str) -> dict[str, Any]:
        """The exercise result a finished future stands for (a grader-error row if it failed)."""
        try:
            out = fut.result()
        except Exception as err:  # noqa: BLE001 - KilledWorker, a failed set-up, a lost scheduler
            name = type(err).__name__
            why = (f"the Dask workers grading it died ({name}: {err})" if name == "KilledWorker"
                   else f"{name}: {err}")
            return GradingRun.graders_row(self, exercise, "ungraded", why)  # type: ignore[arg-type]
        if out.get("isolation"):  # the Dask worker's run's own measurement (never a student worker's word)
            from autograder._sandbox import level_at_least

            if not self.isolation or not level_at_least(out["isolation"], str(self.isolation.get("level"))):
                self.isolation = dict(out["isolation"])  # the weakest any Dask worker obtained
        if out.get("device"):
            self.device = out["device"]
        self.launcher.kind = out.get("launcher", self.launcher.kind)
        return out["result"]

    # --------------------------------------------------------------- life cycle
    def cancel(self) -> None:
        """Stops the run (Ctrl-C): queued tasks are cancelled; running ones finish on their workers."""
        self._cancelled.set()
        futures, self._futures = list(self._futures), set()
        if futures and self.client is not None:
            try:
                self.client.cancel(futures)
            except Exception:  # noqa: BLE001 - the scheduler may be gone already
                pass

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def close(self) -> None:
        """Closes the workers' runs (zygotes) and the client; stops a local cluster."""
        if self.client is not None:
            try:
                if self._cluster is None:  # a shared scheduler: its workers must not keep our zygotes
                    self.client.unregister_worker_plugin(self.plugin_name)
            except Exception:  # noqa: BLE001
                pass
            try:
                self.client.close()
            except Exception:  # noqa: BLE001
                pass
            self.client = None
        if self._cluster is not None:
            try:
                self._cluster.close()
            except Exception:  # noqa: BLE001
                pass
            self._cluster = None
