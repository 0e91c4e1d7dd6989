"""Grading on a Dask distributed cluster (``grade --cluster local:N`` / ``--scheduler ADDRESS``): the tasks.

Dask (``pip install 'tapetrace[cluster]'``) is imported only in the scale-out's cluster modules, and only
when asked for: local grading never needs it. What the options accept is ``cluster_options``'; the link to
the scheduler (connecting, registering the run, admitting workers: ``cluster_worker``) is
``cluster_link``'s; :class:`ClusterRun` grades over it:

- **Tasks are (submission, exercise) pairs** carrying the exercise's source text (or why the
  loader refused its file): the client's loader (``_loader.load``) reads every submission, so
  workers need no shared filesystem and never parse a notebook or a zip. Submissions are read
  lazily and only as many tasks are in flight as admitted workers have threads. Every task asks for
  the run's resource and is checked again on its worker.
- **No fault becomes a grade.** A task that fails for the cluster's reasons (its worker refused
  it or has no run, the scheduler was lost, a comm error) is submitted again, up to
  :data:`MAX_ATTEMPTS` times, then recorded as ``ungraded``; a task whose workers died
  ``distributed.scheduler.allowed-failures`` + 1 times (``KilledWorker``) is ``ungraded`` at once.
  A restarted scheduler's tasks in flight are submitted again. A scheduler that stays down, or no
  admitted worker for the patience (``TAPETRACE_CLUSTER_PATIENCE``), ends the run: the rows graded
  are kept, the rest are ``ungraded`` (exit status 3; ``--resume`` grades them).
- **Same results.** Rows are made by the engine's own functions (``grade_exercise`` on the worker;
  :mod:`autograder.engine.rows` here, as the local run makes them), so the JSON, CSV,
  feedback, progress and ``--resume`` of ``autograder.cli.grade.run`` work unchanged. A row's
  ``isolation`` is the weakest its exercises were graded under.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import secrets
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from autograder.core import build_record as _build_record
from autograder.core.records import ExerciseRow, ResultRow
from autograder.engine import reading as _reading
from autograder.engine import rows as _rows
from autograder.engine.assembly import Again, RowAssembly, RunFacts, TaskFacts
from autograder.engine.run import schedule
from autograder.scaleout.cluster_link import POLL, SchedulerLink, _GiveUp
from autograder.scaleout.cluster_worker import GradingPlugin, WorkerRefused, _text, grade_task
from autograder.submissions import loadguard as _loadguard

__all__ = ["ClusterRun", "GradingPlugin", "WorkerRefused", "factory", "grade_task", "hide_list"]

MAX_ATTEMPTS = 3  # submissions of one task that failed for the cluster's reasons before it is ungraded
STUCK_POLLS = 3  # a task no admitted worker took for this many looks is submitted again (see _unstick)


def factory(cluster: str | None, scheduler: str | None, **options: Any) -> Callable[..., ClusterRun]:
    """A constructor taking :class:`GradingRun`'s keyword arguments (the CLI passes its own).

    ``options`` are :class:`ClusterRun`'s own (``require_isolation``, ``quiet``, ``patience``...).
    """
    return functools.partial(ClusterRun, cluster=cluster, scheduler=scheduler, **options)


MAX_HIDE = _reading.MAX_HIDE


def hide_list(paths: list[str]) -> list[str]:
    """The places to keep from every student worker, for the client: :func:`autograder.engine.hide_places`
    of the run's submissions (a class in folders of its own is one folder).

    Raises:
        HideRefused: past :data:`MAX_HIDE` places (nothing is graded; never an empty list).
    """
    return _reading.hide_places(paths, tempfile.gettempdir())  # a worker's run keeps its scratch there


@dataclass
class _Item:
    """One (submission, exercise) task of the client: its arguments and how often the cluster failed it."""

    i: int
    exercise: str
    args: tuple
    attempts: int = 0
    reason: str = ""
    stuck: int = 0
    again: Again | None = None  # a second attempt (final): why the first one stopped


class ClusterRun(SchedulerLink):
    """A grading run whose (submission, exercise) tasks run on a Dask cluster.

    Has the interface of :class:`GradingRun` that ``autograder.cli.grade.run`` uses (``grade``, ``cancel``,
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
            (default: ``cluster_options.patience_from_env``).
        **run_kwargs: :class:`GradingRun`'s.
    """

    # ---------------------------------------------------------------- grading
    def keep_outputs(self, places: list[str], rewritten: list[str]) -> None:
        """Keeps the run's own outputs from every student worker, as :meth:`GradingRun.keep_outputs`: sent with
        each task beside the submissions' places (a worker on the client's filesystem hides them)."""
        self._outputs = list(places)
        self._rewritten = list(rewritten)

    def grade(self, paths: list[str], only: list[str] | None = None, jobs: int = 1,
              on_result: Callable[[ResultRow], None] | None = None,
              on_task: Callable[[int, str], None] | None = None,
              exercises_for: dict[str, list[str]] | None = None, deadline: float | None = None,
              resumed: dict[str, ResultRow] | None = None) -> list[ResultRow]:
        """Grades submissions on the cluster; one result object per path, in order, none dropped.

        Same contract as :meth:`GradingRun.grade` (``session.Backend``; the rows assembled by the same
        :class:`~autograder.engine.assembly.RowAssembly`): ``jobs`` is the cluster's (its admitted workers'
        threads); ``deadline`` is refused (``tapetrace grade`` refuses ``--deadline`` with a cluster). An
        exercise whose first attempt carries ``retry`` is submitted again once every first attempt is done.
        Callbacks are called from this thread.
        """
        if deadline is not None:
            raise ValueError("a Dask cluster's run has no deadline (--deadline applies to a local run)")
        rows = RowAssembly(paths, only, seed=self.seed, facts=self.facts, exercises_for=exercises_for,
                           resumed=resumed, on_result=on_result, on_task=on_task)
        held: dict[tuple[int, str], _Item] = {}  # first attempts queued to be graded again (rows.again)

        def record(item: _Item, res: ExerciseRow, out: dict[str, Any] | None = None) -> None:
            task = TaskFacts(dict(out.get("isolation") or {}), dict(out.get("device") or {})) if out else None
            if item.again is not None:
                rows.record_again(item.again, res, task)
            elif rows.offer(item.i, item.exercise, res, task):
                held[(item.i, item.exercise)] = item

        # no student worker may read any submission (HideRefused: none is graded), nor the run's outputs, nor where
        # the client's builds wrote reference material (a Dask worker's own record may not know of them)
        hide = list(dict.fromkeys([*hide_list(paths), *self._outputs,
                                   *(p for p in _build_record.places() if os.path.lexists(p))]))
        todo = self._tasks(paths, rows.wanted, record, hide)
        retry: deque[_Item] = deque()
        inflight: dict[Any, _Item] = {}
        exhausted = False
        try:
            while not self._cancelled.is_set():
                try:
                    self._poll()
                except _GiveUp as err:  # what waits to be graded again is recorded ungraded with the rest
                    retry.extend(dataclasses.replace(held.pop((a.i, a.exercise)), again=a) for a in rows.again())
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
                    # every first attempt done: those that carried ``retry`` are graded again (a final attempt)
                    retry.extend(dataclasses.replace(held.pop((a.i, a.exercise)), attempts=0, again=a)
                                 for a in rows.again())
                    if not retry:
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
        out = rows.close()
        self._report()
        return out

    def facts(self) -> RunFacts:
        """What a finished row states of this run (its workers' device, isolation and launcher; no envelope)."""
        return RunFacts(device=self.device, isolation=self.isolation,
                        launcher=self.launcher.kind, envelope=None, public_only=self.public_only)

    def _graders_row(self, exercise: str, status: str, reason: str) -> dict[str, Any]:
        return _rows.graders_row(exercise, status, reason, lang=self.lang, public_only=self.public_only)

    def _submit(self, item: _Item) -> Any:
        fut = self.client.submit(grade_task, self.plugin_name, self.digest, *item.args, final=item.again is not None,
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
                record(item, self._graders_row(item.exercise, "ungraded", why))
                return
            item.attempts += 1
            item.reason = _text(err)
            if item.attempts < MAX_ATTEMPTS:
                retry.append(item)
                return
            why = f"not graded after {item.attempts} tries on the Dask cluster; last: {item.reason}"
            record(item, self._graders_row(item.exercise, "ungraded", why))
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
        record(item, out["result"], out)

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
            record(item, self._graders_row(item.exercise, "ungraded", reason))
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
               record: Callable[..., None], hide: list[str]) -> Iterator[_Item]:
        """Reads each submission when its first task is due; unreadable ones are rows at once. ``hide``: the
        run's :func:`hide_list`, sent with each task."""
        with _loadguard.Reader(_loadguard.read_seconds(self.timeout)) as reader:  # as GradingRun.grade reads
            for i, p in enumerate(paths):
                order = schedule(wanted[i])
                if not order:
                    continue
                sub = _reading.read_one(reader, p)
                if isinstance(sub, Exception):  # as GradingRun.grade: one rule (rows.early_row)
                    for ex in order:
                        record(_Item(i, ex, ()), _rows.early_row(ex, sub, lang=self.lang,
                                                                 public_only=self.public_only))
                    continue
                where = os.path.abspath(p)
                for ex in order:
                    refused = list(sub.refused[ex]) if ex in sub.refused else None
                    yield _Item(i, ex, (where, sub.form, ex, sub.sources.get(ex), refused, hide, self._rewritten))

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
