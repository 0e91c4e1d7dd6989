"""The cluster client's link to its Dask scheduler: connecting, the run's registration, the workers' verdicts.

:class:`SchedulerLink` starts a ``LocalCluster`` (``--cluster local:N``) or connects to a running scheduler
(``--scheduler``), registers the run's :class:`~autograder.scaleout.cluster_worker.GradingPlugin` under a
name of its own, and looks at the scheduler at most once per :data:`POLL` s (:meth:`SchedulerLink._poll`):

- **A worker proves what it is before it grades** (``cluster_worker``): on every worker, present or joining
  later, the plugin compares the worker's install with the client's fingerprint (``fingerprint``), imports
  what grading needs in a fresh process, resolves the device and measures the isolation a student's worker
  obtains there against ``--require-isolation``. An admitted worker holds a Dask resource named after the
  run, which every task asks for; a refused one gets no task, and the client prints, once, why (its events).
  The admitted workers' threads are the run's capacity.
- **A lost scheduler is not a grade.** A restarted scheduler has lost the run: it is registered again. A
  scheduler that stays down (Dask's reconnection and one fresh connection fail), or no admitted worker for
  the run's patience (``cluster_options``), raises :class:`_GiveUp`: the grading loop (``cluster``) keeps
  the rows graded and records the rest ``ungraded``.

Dask's log records are one line each (:func:`one_line_logs`). Dask is imported only when a link is made.
"""

from __future__ import annotations

import logging
import os
import secrets
import sys
import threading
import time
from typing import Any

from autograder.core.records import IsolationRecord
from autograder.scaleout.cluster_options import PATIENCE_ENV, ClusterError, check_args, parse_cluster, patience_from_env
from autograder.scaleout.cluster_worker import _plugin_class, _text
from autograder.workers import fingerprint as _fingerprint

EXAMINE_GUARD = 1800.0  # a hang guard: a worker examined (or silent) for longer counts as refused
POLL = 1.0  # seconds between looks at the scheduler (connection, workers' verdicts, capacity)


class _Kind:
    def __init__(self, kind: str) -> None:
        self.kind = kind


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


class SchedulerLink:
    """A run's link to a Dask scheduler and what it learns there; :class:`~autograder.scaleout.cluster.ClusterRun`
    grades over it (its arguments are documented there).

    Raises:
        ClusterError: Dask is missing, the arguments are wrong, or the scheduler cannot be reached.
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
        """Everything of the run but its connection (tests drive ``ClusterRun.grade`` with a stand-in cluster)."""
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
        self.isolation: IsolationRecord = {}  # the weakest a student's worker obtained on any worker
        self.launcher = _Kind(str(run_kwargs.get("launcher", "auto")))
        self.require_isolation = require_isolation
        self.quiet = quiet
        self.patience = float(patience) if patience is not None else patience_from_env()
        self.window = window
        self.where = where
        self._cluster: Any = None
        self._futures: set[Any] = set()
        self._cancelled = threading.Event()
        self._outputs: list[str] = []  # the run's outputs, hidden with the submissions (keep_outputs)
        self._rewritten: list[str] = []
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

    # --------------------------------------------------------------- life cycle
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
