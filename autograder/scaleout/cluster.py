"""Grading on a Dask distributed cluster (``grade --cluster local:N`` / ``--scheduler ADDRESS``).

Dask (``pip install 'tapetrace[cluster]'``) is imported only here and in ``_cluster_worker``, and only when
asked for: local grading never needs it.

- **A worker proves what it is before it grades** (``_cluster_worker``): the client registers a
  :class:`GradingPlugin` under a name of its own; on every worker, present or joining later, it
  compares the worker's install with the client's fingerprint (engine, hidden suites, references,
  probes, tolerances, datasets, library versions: ``_fingerprint``), imports what grading needs in a
  fresh process, resolves the device and measures the isolation a student's worker obtains there
  against ``--require-isolation``. An admitted worker starts its warm ``GradingRun`` and holds a Dask
  resource named after the run, which every task asks for; a refused one gets no task, and the
  client prints, once, why (its events). Every task checks again, so a worker that joins late, or
  whose isolation drops, grades nothing it may not.
- **Tasks are (submission, exercise) pairs** carrying the exercise's source text (or why the
  loader refused its file): the client's loader (``_loader.load``) reads every submission, so
  workers need no shared filesystem and never parse a notebook or a zip. Submissions are read
  lazily and only as many tasks are in flight as admitted workers have threads.
- **No fault becomes a grade.** A task that fails for the cluster's reasons (its worker refused
  it or has no run, the scheduler was lost, a comm error) is submitted again, up to
  :data:`MAX_ATTEMPTS` times, then recorded as ``ungraded``; a task whose workers died
  ``distributed.scheduler.allowed-failures`` + 1 times (``KilledWorker``) is ``ungraded`` at once.
  A restarted scheduler has lost the run: the client registers it again and resubmits what was in
  flight. A scheduler that stays down (Dask's reconnection and one fresh connection fail), or no
  admitted worker for :data:`DEFAULT_PATIENCE` seconds (``TAPETRACE_CLUSTER_PATIENCE``), ends the
  run: the rows graded are kept, the rest are ``ungraded`` (exit status 3; ``--resume`` grades them).
- **Same results.** Rows are made by the engine's own functions (``grade_exercise`` on the worker;
  the run's ``_empty``/``_finish``/``_unreadable``/``graders_row`` here), so the JSON, CSV,
  feedback, progress and ``--resume`` of ``cmd_grade`` work unchanged. A row's ``isolation`` is the
  weakest its exercises were graded under.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import re
import secrets
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from autograder.core.paths import EXERCISES
from autograder.engine import run as _engine
from autograder.engine.run import GradingRun, read_error, schedule
from autograder.scaleout.cluster_worker import GradingPlugin, WorkerRefused, _plugin_class, _text, grade_task
from autograder.submissions import loader as _loader
from autograder.submissions import loadguard as _loadguard
from autograder.workers import fingerprint as _fingerprint

__all__ = ["ClusterError", "ClusterRun", "GradingPlugin", "WorkerRefused", "check_args", "factory", "grade_task",
           "hide_list", "parse_cluster"]

EXTRA = "pip install 'tapetrace[cluster]'"
_SPEC = re.compile(r"^local:(\d+)$")
PATIENCE_ENV = "TAPETRACE_CLUSTER_PATIENCE"
DEFAULT_PATIENCE = 600.0  # seconds without an admitted (or still examined) worker before the rest is ungraded
MAX_ATTEMPTS = 3  # submissions of one task that failed for the cluster's reasons before it is ungraded
EXAMINE_GUARD = 1800.0  # a hang guard: a worker examined (or silent) for longer counts as refused
POLL = 1.0  # seconds between looks at the scheduler (connection, workers' verdicts, capacity)
STUCK_POLLS = 3  # a task no admitted worker took for this many looks is submitted again (see _unstick)


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


def factory(cluster: str | None, scheduler: str | None, **options: Any) -> Callable[..., ClusterRun]:
    """A constructor taking :class:`GradingRun`'s keyword arguments (the CLI passes its own).

    ``options`` are :class:`ClusterRun`'s own (``require_isolation``, ``quiet``, ``patience``...).
    """
    return functools.partial(ClusterRun, cluster=cluster, scheduler=scheduler, **options)


def patience_from_env() -> float:
    """:data:`PATIENCE_ENV` in seconds (:data:`DEFAULT_PATIENCE` when unset or not a positive number)."""
    try:
        value = float(os.environ.get(PATIENCE_ENV, ""))
    except ValueError:
        return DEFAULT_PATIENCE
    return value if value > 0 else DEFAULT_PATIENCE


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


# -------------------------------------------------------------------- client
class _Kind:
    def __init__(self, kind: str) -> None:
        self.kind = kind


@dataclass
class _Item:
    """One (submission, exercise) task of the client: its arguments and how often the cluster failed it."""

    i: int
    exercise: str
    args: tuple
    attempts: int = 0
    reason: str = ""
    stuck: int = 0


class _GiveUp(Exception):
    """The rest of the run cannot be graded on this cluster (why: the message)."""


class _OneLine(logging.Filter):
    """Dask's log records without their tracebacks: a lost connection is one line in the instructor's log
    (tapetrace says what it means and what to do), never a page of Tornado frames."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            err = record.exc_info[1]
            record.msg = f"{record.getMessage()} ({type(err).__name__}{': ' + str(err) if str(err) else ''})"
            record.args = None
        record.exc_info = None
        record.exc_text = None
        record.stack_info = None
        return True


def one_line_logs() -> None:
    """Every handler of Dask's ``distributed`` logger writes one line per record (idempotent)."""
    for handler in logging.getLogger("distributed").handlers:
        if not any(isinstance(f, _OneLine) for f in handler.filters):
            handler.addFilter(_OneLine())


class ClusterRun:
    """A grading run whose (submission, exercise) tasks run on a Dask cluster.

    Has the interface of :class:`GradingRun` that ``cmd_grade`` uses (``grade``, ``cancel``,
    ``close``, ``seed``); every keyword argument of :class:`GradingRun` is passed on to the runs the
    workers keep. The device is resolved on the workers (a login node without a GPU can drive GPU
    workers). The isolation is measured on each worker when it is admitted (there is no
    ``measure_isolation`` here: ``--require-isolation`` is every worker's admission rule).

    Args:
        cluster: ``local:N`` (a ``LocalCluster`` of N processes here), or None.
        scheduler: a running scheduler's address or scheduler file, or None.
        window: tasks in flight (default: the admitted workers' threads).
        allowed_failures: ``distributed.scheduler.allowed-failures`` of a local cluster.
        connect_timeout: for connecting (and Dask's reconnecting) to the scheduler.
        require_isolation: ``--require-isolation`` (each worker is admitted only at this level).
        quiet: no notes (refusals and lost schedulers are still said).
        patience: seconds without an admitted worker before the rest is ungraded
            (default: :func:`patience_from_env`).
        **run_kwargs: :class:`GradingRun`'s.
    """

    def __init__(self, *, cluster: str | None = None, scheduler: str | None = None, window: int | None = None,
                 allowed_failures: int | None = None, connect_timeout: float | str | None = None,
                 require_isolation: str | None = None, quiet: bool = False, patience: float | None = None,
                 **run_kwargs: Any) -> None:
        if (cluster is None) == (scheduler is None):
            raise ClusterError("give one of --cluster local:N and --scheduler ADDRESS")
        why = check_args(cluster, scheduler)
        if why:
            raise ClusterError(why)
        import dask
        from distributed import Client, LocalCluster

        one_line_logs()
        if connect_timeout is None:  # DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT, 30 s by default
            connect_timeout = dask.config.get("distributed.comm.timeouts.connect")
        self._connect_timeout = connect_timeout
        self._init_state(run_kwargs, where=scheduler or cluster or "", require_isolation=require_isolation,
                         quiet=quiet, patience=patience, window=window)
        self._scheduler_file = bool(scheduler and os.path.isfile(scheduler))
        try:
            if cluster is not None:
                # tasks last seconds: a worker holds only the one it runs (a death then costs one task)
                config: dict[str, Any] = {"distributed.scheduler.worker-saturation": 1.0}
                if allowed_failures is not None:
                    config["distributed.scheduler.allowed-failures"] = allowed_failures
                with dask.config.set(config):
                    self._cluster = LocalCluster(n_workers=parse_cluster(cluster), threads_per_worker=1,
                                                 processes=True, host="127.0.0.1", dashboard_address=None,
                                                 silence_logs=logging.ERROR)
                self.client = Client(self._cluster)
            else:
                self.client = self._connect()
        except (OSError, TimeoutError, ValueError) as err:
            self.close()
            raise ClusterError(f"cannot reach the Dask scheduler {scheduler or cluster}: "
                               f"{str(err).splitlines()[0] if str(err) else type(err).__name__}") from None
        try:
            self._register()
        except Exception as err:  # noqa: BLE001 - the scheduler went away between connecting and registering
            self.close()
            raise ClusterError(f"cannot register the run with the Dask scheduler {self.where}: "
                               f"{type(err).__name__}: {err}") from None
        except BaseException:
            self.close()
            raise

    def _init_state(self, run_kwargs: dict[str, Any], *, where: str, require_isolation: str | None = None,
                    quiet: bool = False, patience: float | None = None, window: int | None = None) -> None:
        """Everything of the run but its connection (tests drive :meth:`grade` with a stand-in cluster)."""
        from autograder.core import device as _device

        if run_kwargs.get("seed") is None:
            run_kwargs["seed"] = secrets.randbelow(2**31)  # one seed for every worker's run
        self.run_kwargs = run_kwargs
        self.seed = int(run_kwargs["seed"])
        self.lang = run_kwargs.get("lang", "en")
        self.public_only = bool(run_kwargs.get("public_only", False))
        self.timeout = float(run_kwargs.get("timeout", 30.0))  # the reading budget follows it (_loadguard)
        # known here for --device cpu; else from the first admitted worker
        self.device: dict[str, str] = _device.resolve("cpu") if run_kwargs.get("device") == "cpu" else {}
        self.isolation: dict[str, Any] = {}  # the weakest a student's worker obtained on any worker
        self.launcher = _Kind(str(run_kwargs.get("launcher", "auto")))
        self.require_isolation = require_isolation
        self.quiet = quiet
        self.patience = float(patience) if patience is not None else patience_from_env()
        self.window = window
        self.where = where
        self._cluster: Any = None
        self._futures: set[Any] = set()
        self._cancelled = threading.Event()
        self.plugin_name = f"tapetrace-run-{secrets.token_hex(6)}"
        self.fingerprint = _fingerprint.fingerprint()
        self.digest = _fingerprint.digest(self.fingerprint)
        self.workers: dict[str, dict[str, Any]] = {}  # address -> its latest event (state, reason, ...)
        self.graded_by: dict[str, int] = {}
        self._said: set[tuple[str, str]] = set()
        self._capacity = 0
        self._polled = self._unstuck_at = float("-inf")
        self._hopeless_since: float | None = None
        self._first_seen: dict[str, float] = {}
        self._scheduler_id: str | None = None
        self.client: Any = None

    def _connect(self) -> Any:
        from distributed import Client

        if self._scheduler_file:
            return Client(scheduler_file=self.where, timeout=self._connect_timeout)
        return Client(self.where, timeout=self._connect_timeout)

    def _register(self) -> None:
        """Registers the run's plugin with the scheduler: every worker, now and later, is examined for it."""
        plugin = _plugin_class()(self.run_kwargs, self.plugin_name, self.fingerprint, self.require_isolation)
        self.client.register_plugin(plugin, name=self.plugin_name)
        self._scheduler_id = self.client.scheduler_info(n_workers=0).get("id")

    def _say(self, text: str) -> None:
        from autograder.reports import report as _report

        print(f"tapetrace: {_report.terminal_text(text)}", file=sys.stderr, flush=True)

    # ------------------------------------------------------------ the cluster
    def _poll(self) -> None:
        """At most once per :data:`POLL` s: the connection, the workers' verdicts, the capacity, the patience.

        Raises:
            _GiveUp: the scheduler stays unreachable, or no worker could grade for :attr:`patience` s.
        """
        now = time.monotonic()
        if now - self._polled < POLL:
            return
        self._polled = now
        if not self._connected():
            self._capacity = 0
            return
        try:
            info = self.client.scheduler_info(n_workers=-1)
            if info.get("id") != self._scheduler_id:  # a new scheduler: the run died with the old one
                self._say(f"the Dask scheduler {self.where} was restarted: registering this run with it again")
                self._register()
                info = self.client.scheduler_info(n_workers=-1)
            events = self.client.get_events(self.plugin_name)
        except Exception:  # noqa: BLE001 - lost between two calls: the next look sees it
            self._capacity = 0
            return
        for _t, msg in events:
            if isinstance(msg, dict) and msg.get("worker"):
                self._heard(msg)
        present = info.get("workers", {})
        admitted = [a for a, w in present.items() if (w.get("resources") or {}).get(self.plugin_name, 0) > 0]
        self._capacity = sum(int(present[a].get("nthreads", 1)) for a in admitted)
        for a in present:
            self._first_seen.setdefault(a, now)
        # a worker still examined (or not heard from yet) keeps the run waiting: its verdict may be yes
        examined = [a for a in present if a not in admitted
                    and self.workers.get(a, {}).get("state", "examining") == "examining"
                    and now - self._first_seen[a] < EXAMINE_GUARD]
        if admitted or examined:
            self._hopeless_since = None
        elif self._hopeless_since is None:
            self._hopeless_since = now
        elif now - self._hopeless_since >= self.patience:
            refused = sorted({f"{a}: {w.get('reason', '')}" for a, w in self.workers.items()
                              if w.get("state") == "refused"})
            raise _GiveUp(f"no Dask worker could grade this run for {self.patience:.0f} s ({PATIENCE_ENV})"
                          + (f"; refused: {' | '.join(refused)}" if refused else "; no worker joined"))

    def _heard(self, msg: dict[str, Any]) -> None:
        """One event of a worker's admission: remembered; a refusal is said once, an admission teaches the device."""
        from autograder.sandbox.isolate import level_at_least

        addr, state = str(msg["worker"]), str(msg.get("state", ""))
        self.workers[addr] = msg
        if state == "refused" and (addr, str(msg.get("reason"))) not in self._said:
            self._said.add((addr, str(msg.get("reason"))))
            self._say(f"Dask worker {addr} refused: {msg.get('reason', '')}")
        if state == "admitted":
            if msg.get("device") and not self.device:
                self.device = dict(msg["device"])
            if msg.get("launcher"):
                self.launcher.kind = str(msg["launcher"])
            iso = msg.get("isolation")
            if isinstance(iso, dict) and iso and (not self.isolation or not level_at_least(
                    iso, str(self.isolation.get("level", "minimal")))):
                self.isolation = dict(iso)

    def _connected(self) -> bool:
        """Whether the client talks to a scheduler now; reconnects once after Dask gave up.

        Raises:
            _GiveUp: the scheduler stays unreachable.
        """
        status = getattr(self.client, "status", "closed")
        if status == "running":
            return True
        if status in ("connecting", "newly-created"):
            return False  # Dask reconnects (for its connect timeout); the tasks in flight were cancelled
        if self._cluster is not None:
            raise _GiveUp("the local Dask cluster stopped")
        old, self.client = self.client, None
        try:
            old.close()
        except Exception:  # noqa: BLE001
            pass
        try:
            self.client = self._connect()
        except Exception as err:  # noqa: BLE001 - OSError, TimeoutError, whatever the comm raised
            raise _GiveUp(f"the Dask scheduler {self.where} is unreachable ({_text(err).splitlines()[0]})") from None
        return True

    # ---------------------------------------------------------------- grading
    def grade(self, paths: list[str], only: list[str] | None = None, jobs: int = 1,
              on_result: Callable[[dict[str, Any]], None] | None = None,
              on_task: Callable[[int, str], None] | None = None,
              exercises_for: dict[str, list[str]] | None = None) -> list[dict[str, Any]]:
        """Grades submissions on the cluster; one result object per path, in order, none dropped.

        Same contract as :meth:`GradingRun.grade` (``jobs`` is the cluster's: its admitted workers'
        threads). Callbacks are called from this thread.
        """
        from autograder.sandbox.isolate import level_at_least

        exercises = [e for e in EXERCISES if not only or e in only]
        wanted = [[e for e in exercises if e in (exercises_for or {}).get(p, exercises)] for p in paths]
        results: list[dict[str, Any] | None] = [None] * len(paths)
        pending = {i: len(wanted[i]) for i in range(len(paths))}
        facts: dict[int, dict[str, Any]] = {}  # per row: the weakest isolation, the device, of its tasks
        unsent: list[int] = []  # rows complete before any worker told the device

        def finish(i: int) -> None:
            row = results[i]
            assert row is not None
            GradingRun._finish(self, row, wanted[i])  # type: ignore[arg-type]
            mine = facts.get(i, {})
            row["isolation"] = dict(mine.get("isolation") or self.isolation)
            row["device"] = dict(mine.get("device") or self.device)
            if on_result:
                on_result(row)

        def record(i: int, ex: str, res: dict[str, Any], out: dict[str, Any] | None = None) -> None:
            if results[i] is None:
                results[i] = GradingRun._empty(self, paths[i])  # type: ignore[arg-type]
            row = results[i]
            assert row is not None
            row["exercises"][ex] = res
            if out:
                mine = facts.setdefault(i, {})
                iso = out.get("isolation") or {}
                if iso and (not mine.get("isolation") or not level_at_least(
                        iso, str(mine["isolation"].get("level", "minimal")))):
                    mine["isolation"] = dict(iso)
                mine["device"] = dict(out.get("device") or {})
            pending[i] -= 1
            if on_task:
                on_task(i, ex)
            if pending[i] == 0:
                if self.device or i in facts:
                    finish(i)
                else:
                    unsent.append(i)
            if self.device and unsent:
                for j in unsent:
                    finish(j)
                unsent.clear()

        todo = self._tasks(paths, wanted, record)
        retry: deque[_Item] = deque()
        inflight: dict[Any, _Item] = {}
        exhausted = False
        try:
            while not self._cancelled.is_set():
                try:
                    self._poll()
                except _GiveUp as err:
                    self._abandon(str(err), inflight, retry, todo, record)
                    break
                self._unstick(inflight, retry)
                while len(inflight) < self._window() and self._capacity > 0 and not self._cancelled.is_set():
                    item = retry.popleft() if retry else (None if exhausted else next(todo, None))
                    if item is None:
                        exhausted = True
                        break
                    try:
                        fut = self._submit(item)
                    except Exception:  # noqa: BLE001 - the scheduler went away: the next look sees it
                        retry.appendleft(item)
                        break
                    inflight[fut] = item
                if exhausted and not retry and not inflight:
                    break
                if not inflight:
                    time.sleep(POLL / 4)
                    continue
                for fut in self._wait(inflight):
                    item = inflight.pop(fut)
                    self._futures.discard(fut)
                    if self._cancelled.is_set():
                        break
                    self._settle(fut, item, retry, record)
        except BaseException:
            self.cancel()
            raise
        for j in unsent:
            finish(j)
        for i, p in enumerate(paths):
            if not wanted[i]:
                results[i] = GradingRun._empty(self, p)  # type: ignore[arg-type]
                finish(i)
        self._report()
        return [r for r in results if r is not None]

    def _submit(self, item: _Item) -> Any:
        fut = self.client.submit(grade_task, self.plugin_name, self.digest, *item.args,
                                 key=f"tapetrace-{item.exercise}-{item.i}-{secrets.token_hex(4)}", pure=False,
                                 resources={self.plugin_name: 1})
        self._futures.add(fut)
        return fut

    def _wait(self, inflight: dict[Any, _Item]) -> list[Any]:
        """The futures among ``inflight`` that are done, waiting at most :data:`POLL` s for one."""
        from distributed import wait

        try:
            done, _ = wait(list(inflight), timeout=POLL, return_when="FIRST_COMPLETED")
        except TimeoutError:
            return []
        except Exception:  # noqa: BLE001 - a closed client: the next look reconnects or gives up
            time.sleep(POLL / 4)
            return [f for f in inflight if f.done()]
        return list(done)

    def _settle(self, fut: Any, item: _Item, retry: deque[_Item],
                record: Callable[..., None]) -> None:
        """Records a finished task, or submits it again (a cluster fault), or records it ungraded."""
        from autograder.sandbox.isolate import level_at_least

        try:
            if fut.status == "cancelled":
                raise WorkerRefused("the Dask scheduler dropped it (connection lost)")
            out = fut.result()
        except Exception as err:  # noqa: BLE001 - every failure of a task is the cluster's (grade_task never raises)
            name = type(err).__name__
            if name == "KilledWorker":
                why = f"the Dask workers grading it died ({_text(err)})"
                record(item.i, item.exercise, GradingRun.graders_row(self, item.exercise, "ungraded", why))  # type: ignore[arg-type]
                return
            item.attempts += 1
            item.reason = _text(err)
            if item.attempts < MAX_ATTEMPTS:
                retry.append(item)
                return
            why = f"not graded after {item.attempts} tries on the Dask cluster; last: {item.reason}"
            record(item.i, item.exercise, GradingRun.graders_row(self, item.exercise, "ungraded", why))  # type: ignore[arg-type]
            return
        finally:
            try:
                fut.release()
            except Exception:  # noqa: BLE001
                pass
        if out.get("launcher"):
            self.launcher.kind = out["launcher"]
        if out.get("device") and not self.device:
            self.device = dict(out["device"])
        iso = out.get("isolation") or {}
        if iso and (not self.isolation or not level_at_least(iso, str(self.isolation.get("level", "minimal")))):
            self.isolation = dict(iso)
        self.graded_by[str(out.get("worker"))] = self.graded_by.get(str(out.get("worker")), 0) + 1
        record(item.i, item.exercise, out["result"], out)

    def _unstick(self, inflight: dict[Any, _Item], retry: deque[_Item]) -> None:
        """Submits again a task that no worker took while admitted workers had room.

        A task submitted while no worker held the run's resource waits in the scheduler's
        ``no-worker`` state, and a worker admitted later (a resource set, not a worker added) does
        not wake it: after :data:`STUCK_POLLS` looks it is cancelled and submitted anew (no attempt counted).
        """
        now = time.monotonic()
        if self._capacity <= 0 or not inflight or now - self._unstuck_at < POLL:
            return
        self._unstuck_at = now
        try:
            busy = {str(k) for keys in self.client.processing().values() for k in keys}
        except Exception:  # noqa: BLE001
            return
        for fut, item in list(inflight.items()):
            if fut.status != "pending" or str(fut.key) in busy:
                item.stuck = 0
                continue
            item.stuck += 1
            if item.stuck >= STUCK_POLLS:
                item.stuck = 0
                del inflight[fut]
                self._futures.discard(fut)
                try:
                    self.client.cancel([fut])
                except Exception:  # noqa: BLE001
                    pass
                retry.appendleft(item)

    def _abandon(self, why: str, inflight: dict[Any, _Item], retry: deque[_Item], todo: Iterator[_Item],
                 record: Callable[..., None]) -> None:
        """Records every task not graded yet as ``ungraded`` (``why``) and says what to do."""
        self._say(f"{why}: every row graded so far is kept; the rest is recorded as ungraded. Start the "
                  "scheduler and its workers again, then grade again with --resume (see README, "
                  "\"Grading on several machines\")")
        futures = list(inflight)
        self._futures.difference_update(futures)
        if futures and self.client is not None:
            try:
                self.client.cancel(futures)
            except Exception:  # noqa: BLE001
                pass
        for item in [*inflight.values(), *retry, *todo]:
            reason = f"{why}" + (f"; last: {item.reason}" if item.reason else "")
            record(item.i, item.exercise, GradingRun.graders_row(self, item.exercise, "ungraded", reason))  # type: ignore[arg-type]
        inflight.clear()
        retry.clear()

    def _report(self) -> None:
        """After grading: who graded, and a line when a student's worker had less than full isolation."""
        from autograder.sandbox import isolate as _sandbox

        if self.quiet:
            return
        who = [f"{a} graded {n} task(s)" for a, n in sorted(self.graded_by.items())]
        who += [f"{a} refused" for a, w in sorted(self.workers.items())
                if w.get("state") == "refused" and a not in self.graded_by]
        if who:
            self._say("Dask workers: " + "; ".join(who))
        if self.isolation and self.isolation.get("level") != "full":
            self._say(f"note: {_sandbox.describe(self.isolation)}; see README, \"Sandbox\"")

    def _window(self) -> int:
        """How many tasks may be in flight: one per admitted worker thread (re-read at each look).

        Only as many as can run, so a worker that dies holds just the tasks it runs, a worker that
        joins gets work at once, and queued submissions stay in the client, read lazily.
        """
        return self.window or max(1, self._capacity)

    def _tasks(self, paths: list[str], wanted: list[list[str]],
               record: Callable[..., None]) -> Iterator[_Item]:
        """Reads each submission when its first task is due; unreadable ones are rows at once."""
        hide = hide_list(paths)  # no student worker may read any submission
        with _loadguard.Reader(_loadguard.read_seconds(self.timeout)) as reader:  # as GradingRun.grade reads
            for i, p in enumerate(paths):
                order = schedule(wanted[i])
                if not order:
                    continue
                try:
                    sub = reader.load(p)
                except _loadguard.ReaderTrouble as err:  # the grader's trouble: those rows are grader_error
                    for ex in order:
                        record(i, ex, GradingRun.graders_row(self, ex, "grader_error", str(err)))  # type: ignore[arg-type]
                    continue
                except Exception as err:  # noqa: BLE001 - GradingRun.grade does the same
                    error = read_error(err) if isinstance(err, _loader.SubmissionError) \
                        else f"{type(err).__name__}: {err}"
                    for ex in order:
                        record(i, ex, GradingRun._unreadable(self, ex, error,  # type: ignore[arg-type]
                                                             status=getattr(err, "status", "unreadable")))
                    continue
                where = os.path.abspath(p)
                for ex in order:
                    refused = list(sub.refused[ex]) if ex in sub.refused else None
                    yield _Item(i, ex, (where, sub.form, ex, sub.sources.get(ex), refused, hide))

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
                # a shared scheduler: its workers must not keep our zygotes (not when it is gone: that would wait)
                if self._cluster is None and self.client.status == "running":
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
