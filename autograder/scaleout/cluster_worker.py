"""The worker side of grading on a Dask cluster: a worker's admission to a run, and the task it grades.

:class:`GradingPlugin` (a ``distributed.WorkerPlugin``, registered by :class:`autograder.scaleout.cluster.ClusterRun`
under the run's name) examines each worker when the run registers or when the worker joins later: its
install against the client's fingerprint (``_fingerprint``), the files and an import of the libraries
grading needs, the device, then the isolation a student's worker obtains there against
``--require-isolation``. An admitted worker starts its warm :class:`~autograder.engine.run.GradingRun` and
announces a Dask resource named after the run (one unit per thread; every task asks for one, so only
admitted workers get tasks); a refused one logs why and sends the client an event naming the
difference. :func:`grade_task` checks again on every task (the run is there, the install unchanged, the
isolation still enough after grading) and raises :class:`WorkerRefused` otherwise: the client submits
the task again elsewhere, and no grade comes from a worker that does not qualify.

Dask is imported only inside functions: this module imports without it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import threading
from typing import Any

from autograder.engine import reading as _reading
from autograder.engine.run import GradingRun
from autograder.submissions import loader as _loader
from autograder.workers import fingerprint as _fingerprint

_RUN_LOCK = threading.Lock()
logger = logging.getLogger("tapetrace.cluster")


class WorkerRefused(RuntimeError):
    """This Dask worker may not grade this run's task (install, imports, device, isolation, or no run)."""


def _text(err: BaseException) -> str:
    """``"Type: message"`` of an exception, even one whose ``str`` fails (a Dask error missing a field)."""
    try:
        msg = str(err)
    except Exception:  # noqa: BLE001
        msg = repr(err.args)
    return f"{type(err).__name__}: {msg}" if msg else type(err).__name__


def _plain(value: Any) -> Any:
    """``value`` as JSON types (what an event may carry)."""
    return json.loads(json.dumps(value, default=str))


class GradingPlugin:
    """Admits a Dask worker to one grading run and keeps its :class:`GradingRun` (a ``distributed.WorkerPlugin``).

    Subclassing is done lazily (:func:`_plugin_class`) so that this module imports without Dask.

    Args:
        run_kwargs: :class:`GradingRun`'s keyword arguments (device, timeout, seed, ...).
        name: the run's name: the plugin's, the Dask resource's and the event topic's.
        fingerprint: the client's install (:func:`_fingerprint.fingerprint`).
        require_isolation: the least isolation a student's worker must obtain here (None: any).
    """

    def __init__(self, run_kwargs: dict[str, Any], name: str, fingerprint: dict[str, str] | None = None,
                 require_isolation: str | None = None) -> None:
        self.run_kwargs = dict(run_kwargs)
        self.name = name
        self.fingerprint = dict(fingerprint or {})
        self.digest = _fingerprint.digest(self.fingerprint)
        self.require_isolation = require_isolation
        self.run: GradingRun | None = None
        self.verdict: str | None = None  # None: not decided yet; "": admitted; else why it is refused
        self.closed = False

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.update(run=None, verdict=None, closed=False)
        state.pop("_admission", None)
        return state

    async def setup(self, worker: Any) -> None:
        # In the background: the examination takes seconds (the zygotes import what grading needs), and the
        # scheduler's registration of the plugin waits for every worker's setup.
        self._admission = asyncio.ensure_future(self._admit(worker))

    async def _admit(self, worker: Any) -> None:
        self._publish(worker, "examining")
        try:
            info = await asyncio.get_running_loop().run_in_executor(None, self.examine)
        except Exception as err:  # noqa: BLE001 - a worker that cannot say what it is does not grade
            info = self._refuse(f"its examination failed: {_text(err)}")
        if self.closed:
            return
        if self.verdict == "":
            try:
                await worker.set_resources(**{self.name: float(getattr(worker.state, "nthreads", 1) or 1)})
            except Exception as err:  # noqa: BLE001
                self._refuse(f"it could not announce itself to the scheduler: {_text(err)}")
        if self.verdict == "":
            self._publish(worker, "admitted", **info)
        else:
            logger.warning("tapetrace run %s: this worker is refused: %s", self.name, self.verdict)
            self._publish(worker, "refused", reason=self.verdict)

    def _publish(self, worker: Any, state: str, **info: Any) -> None:
        try:
            worker.log_event(self.name, _plain({"worker": worker.address, "state": state,
                                                "threads": getattr(worker.state, "nthreads", 1), **info}))
        except Exception:  # noqa: BLE001 - the client then learns it from the resource alone
            logger.exception("tapetrace run %s: cannot tell the client", self.name)

    def _refuse(self, reason: str) -> dict[str, Any]:
        with _RUN_LOCK:
            self.verdict = reason
        return {}

    def examine(self) -> dict[str, Any]:
        """Decides whether this worker may grade the run (in a thread of the worker; sets :attr:`verdict`).

        Returns:
            For an admitted worker: its ``device``, ``launcher`` and ``isolation``; else ``{}``.
        """
        from autograder.core import device as _device
        from autograder.sandbox import isolate as _sandbox

        diff = _fingerprint.differences(_fingerprint.fingerprint(), self.fingerprint)
        if diff:
            return self._refuse("its install differs from the client's: " + "; ".join(diff))
        missing = _fingerprint.missing_files()
        if missing:
            return self._refuse("it cannot import what grading needs: " + "; ".join(missing))
        # the run's zygotes import what grading needs in fresh processes: their word is the import check.
        # Without zygotes (spawned workers), a process of its own imports it all, beside the run's start
        check = _fingerprint.ImportCheck() if not self._zygotes() else None
        try:
            run = GradingRun(**self.run_kwargs)
        except _device.DeviceError as err:
            if check is not None:
                check.stop()
            return self._refuse(str(err))
        except BaseException:
            if check is not None:
                check.stop()
            raise
        problems = self._import_problems(run, check)
        if problems:
            run.close()
            from autograder.workers.environment import unseen_note  # the grader's libraries on its PYTHONPATH?

            hint = unseen_note()
            return self._refuse("it cannot import what grading needs: " + "; ".join(problems)
                                + (f" ({hint})" if hint else ""))
        iso = run.measure_isolation() if run.sandbox else {"level": "minimal", "error": "the sandbox is off"}
        wanted = self.require_isolation
        if wanted and not _sandbox.level_at_least(iso, wanted):
            run.close()
            return self._refuse(f"--require-isolation {wanted}: student code would run here with "
                                f"{_sandbox.describe(iso)}" + (f" ({iso['error']})" if iso.get("error") else ""))
        with _RUN_LOCK:
            if self.closed:
                late = run
            else:
                late, self.run, self.verdict = None, run, ""
        if late is not None:  # the run ended while this worker was examined
            late.close()
            return {}
        return {"device": dict(run.device), "launcher": run.launcher.kind, "isolation": dict(run.isolation or iso)}

    def _zygotes(self) -> bool:
        """Whether this worker's run is meant to start zygotes (else its workers are spawned)."""
        return hasattr(os, "fork") and self.run_kwargs.get("launcher", "auto") != "spawn"

    @staticmethod
    def _import_problems(run: GradingRun, check: _fingerprint.ImportCheck | None) -> list[str]:
        """What grading cannot import here: the run's zygotes' word, else an :class:`ImportCheck`'s.

        A zygote that died or hung while importing is a problem (the worker is refused), never a pass.
        """
        from autograder.workers import warmup as _warmup

        timeout = _fingerprint.IMPORT_CHECK_TIMEOUT
        if check is None:
            problems = run.zygote_imports(_warmup.PRELOAD, timeout)
            if problems is not None:
                return problems
            check = _fingerprint.ImportCheck()  # no zygote imported it all (none started): a process of its own
        return check.result(timeout)

    def admitted(self, worker: Any, digest: str) -> GradingRun:
        """This worker's run, for a task of the install ``digest``; the same checks as the admission's.

        Raises:
            WorkerRefused: not admitted (yet), refused, closed, or its install changed since.
        """
        with _RUN_LOCK:
            verdict, run = self.verdict, self.run
        if digest != self.digest:
            raise WorkerRefused("the task comes from another install than this worker's run")
        if verdict is None:
            raise WorkerRefused("this worker is still being examined")
        if verdict or run is None or self.closed:
            raise WorkerRefused(verdict or "this worker's run is closed")
        diff = _fingerprint.differences(_fingerprint.fingerprint(), self.fingerprint)
        if diff:
            self.refuse_now(worker, "its install changed since it was admitted: " + "; ".join(diff))
        return run

    def after(self, worker: Any, run: GradingRun) -> None:
        """Checks, after a task graded, that its result may stand (the run open, the isolation still enough).

        Raises:
            WorkerRefused: the run was closed meanwhile, or a student's worker obtained less isolation than
                required (the worker is refused from now on; the result is dropped and graded elsewhere).
        """
        from autograder.sandbox import isolate as _sandbox

        if self.closed or self.run is not run:
            raise WorkerRefused("this worker's run was closed while it graded")
        wanted = self.require_isolation
        iso = dict(run.isolation)
        if wanted and not _sandbox.level_at_least(iso, wanted):
            self.refuse_now(worker, f"--require-isolation {wanted}: a student's worker obtained "
                                    f"{_sandbox.describe(iso)}")

    def refuse_now(self, worker: Any, reason: str) -> None:
        """Refuses this worker from a task's thread: no more tasks come to it, and the client is told.

        Raises:
            WorkerRefused: always (the task's result must not stand).
        """
        from distributed.utils import sync

        with _RUN_LOCK:
            first = self.verdict == ""
            self.verdict = reason
        if first:
            logger.warning("tapetrace run %s: this worker is refused: %s", self.name, reason)
            try:
                sync(worker.loop, worker.set_resources, **{self.name: 0.0})
            except Exception:  # noqa: BLE001 - the task check refuses every task anyway
                logger.exception("tapetrace run %s: cannot withdraw the resource", self.name)
            self._publish(worker, "refused", reason=reason)
        raise WorkerRefused(reason)

    def teardown(self, worker: Any) -> None:
        with _RUN_LOCK:
            self.closed = True
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


def grade_task(plugin: str, digest: str, path: str, form: str, exercise: str, source: str | None,
               refused: list[str] | None = None, hide: list[str] | None = None,
               rewritten: list[str] | None = None, final: bool = True) -> dict[str, Any]:
    """Runs on a Dask worker: grades one exercise of one submission with the worker's run.

    Args:
        plugin: the run's name (its :class:`GradingPlugin`'s).
        digest: the client's install (:func:`_fingerprint.digest`): the worker's must be the same.
        path: the submission's absolute path on the client (only used to hide its folder from the
            student's process where the worker shares that filesystem).
        form: the submission's form (``directory``, ``notebook``, ``zip``, ...).
        exercise: the exercise to grade.
        source: the exercise's source text as the client's loader read it (None: no such file).
        refused: ``[file name, kind key]`` when the loader refused the exercise's file (a link...).
        hide: :func:`hide_list` of the run's submissions, kept from every student worker (where
            the worker shares the client's filesystem; elsewhere they do not exist).
        rewritten: the client's outputs it rewrites while grading (its ``--json``) where their folder cannot be
            hidden (:meth:`GradingRun.keep_outputs`); those whose folder exists here.
        final: False for a first attempt (:meth:`GradingRun.grade_exercise`): trouble that may be the grader's
            stops it with ``retry`` in its row, and the client submits it again once every first attempt is done.

    Returns:
        ``{"result": exercise result (GradingRun.grade_exercise's), "isolation", "launcher",
        "device", "worker"}``.

    Raises:
        WorkerRefused: this worker may not grade the run (the client submits the task again).
    """
    from distributed import get_worker

    worker = get_worker()
    holder = worker.plugins.get(plugin)
    if holder is None:
        raise WorkerRefused(f"this Dask worker has no tapetrace run {plugin} (a scheduler that lost the run?)")
    run = holder.admitted(worker, digest)
    sub = _loader.Submission(path, {exercise: source}, form,
                             refused={exercise: (refused[0], refused[1])} if refused else {})
    try:
        try:  # the client chose on its machine: here, hide all of each place but the way to what workers need
            places = _reading.carve(hide or [], run.tmp)
        except _reading.HideRefused as err:  # hiding it would break the student's worker, not hiding leaks
            res = run.graders_row(exercise, "grader_error", str(err))
        else:
            if places:
                run.hide(places)
            here = [p for p in rewritten or () if os.path.isdir(os.path.dirname(p))]
            if here:
                run.keep_outputs([], here)
            res = run.grade_exercise(sub, exercise, final=final)
    except Exception as err:  # noqa: BLE001 - nothing lost (GradingRun.grade does the same)
        res = run.graders_row(exercise, "grader_error", f"internal error: {_text(err)}")
    holder.after(worker, run)
    return {"result": res, "isolation": dict(run.isolation), "launcher": run.launcher.kind,
            "device": dict(run.device), "worker": worker.address}
