"""Grader side: starting and stopping worker processes.

Launchers with one interface (``spawn(spec, fds) -> Proc``, ``close()``): :class:`ZygoteLauncher` forks
workers from a warm process (fast), :class:`ZygotePair` runs two of them (JAX-only work starts while
PyTorch imports), :class:`SpawnLauncher` starts a fresh interpreter per worker (portable fallback).
:class:`Proc` is one started process. Talking to a worker once started is ``handle``'s.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any

from autograder.core.paths import ROOT
from autograder.probing.tools import RESULT_FD, TALLY_ENV
from autograder.workers import warmup as _warmup
from autograder.workers.environment import worker_env
from autograder.workers.records import WorkerSpec


def tallying_env(cpu_jax: bool) -> dict[str, str]:
    """:func:`worker_env`, naming where the worker's probes write their tallies (its result pipe, moved to
    ``RESULT_FD`` by the worker: ``autograder.probing.tools.tally``). Only a process that holds that pipe
    gets it (a zygote and the workers it forks; not a benchmark running probes in its own process)."""
    return {**worker_env(cpu_jax), TALLY_ENV: str(RESULT_FD)}


class Proc:
    """A started worker process."""

    def __init__(self, pid: int, popen: subprocess.Popen | None = None) -> None:
        self.pid = pid
        self.popen = popen
        self.status: int | None = None
        self.exited = threading.Event()

    def wait(self, timeout: float) -> int | None:
        """Waits for the exit status; None if still running after ``timeout``."""
        if self.popen is not None:
            try:
                code = self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                return None
            self.status = (-code & 0x7F) if code < 0 else (code << 8)
            return self.status
        self.exited.wait(timeout)
        return self.status

    def kill(self) -> None:
        """Kills the worker's whole process group (and the worker itself if it is not a group leader)."""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            if self.status is None:  # never the pid of a reaped worker: it may belong to someone else now
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except OSError:
                    pass


class SpawnLauncher:
    """Starts each worker as ``python -m autograder.workers.worker`` (no shared state)."""

    kind = "spawn"

    def __init__(self, cpu_jax: bool = True, prefix: list[str] | None = None) -> None:
        self.cpu_jax = cpu_jax
        self.prefix = list(prefix or [])

    def spawn(self, spec: WorkerSpec, fds: tuple[int, ...]) -> Proc:
        """Starts a worker with ``fds``: its command and result pipes, and optionally its stderr's."""
        popen = subprocess.Popen(
            [*self.prefix, sys.executable, "-m", "autograder.workers.worker", str(fds[0]), str(fds[1]), json.dumps(spec)],
            pass_fds=fds[:2], env=tallying_env(self.cpu_jax), cwd=str(ROOT), start_new_session=True,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=fds[2] if len(fds) > 2 else subprocess.DEVNULL,  # its stderr pipe (Worker.stderr)
        )
        return Proc(popen.pid, popen)

    def close(self) -> None:
        """Nothing to release."""


class ZygoteLauncher:
    """Forks workers from a warm zygote process (imports paid once per run)."""

    kind = "zygote"

    def __init__(self, ready_timeout: float = 120.0, cpu_jax: bool = True, prefix: list[str] | None = None,
                 jax_only: bool = False, wait: bool = True, then_full: socket.socket | None = None,
                 needs: frozenset[str] | None = None) -> None:
        """Starts the zygote.

        Args:
            ready_timeout: seconds its imports may take.
            cpu_jax: the run's JAX device is the CPU (see :func:`worker_env`).
            prefix: a command the zygote runs under (e.g. ``setpriv`` dropping CAP_SYS_ADMIN, to grade
                as in a container with Docker's default privileges).
            jax_only: import the JAX stack only (``_warmup.JAX_ONLY``), for :class:`ZygotePair`.
            wait: wait until it is ready (else call :meth:`wait_ready`).
            then_full: with ``jax_only``, the zygote's end of a socket pair: once ready, the zygote forks
                the full one from itself to serve it (see :meth:`forked`). Closed here.
            needs: what the run's exercises need it to import and warm (``"torch"``, ``"jax"``, ``"compile"``:
                ``autograder.core.registry.zygote_needs``); None: everything. A worker needing more
                imports the rest itself after the fork.
        """
        self._ready_timeout = ready_timeout
        sock, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fds = (child.fileno(), *([then_full.fileno()] if then_full is not None else []))
        extra = ["--needs", _warmup.needs_arg(needs)] if needs is not None else []
        extra += ["--jax-only"] if jax_only else []
        if then_full is not None:
            extra += ["--then-full", str(then_full.fileno())]
        try:
            self._popen: subprocess.Popen | None = subprocess.Popen(
                [*(prefix or []), sys.executable, "-m", "autograder.workers.zygote", str(child.fileno()), *extra],
                pass_fds=fds, env=tallying_env(cpu_jax), cwd=str(ROOT), start_new_session=True,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
        finally:
            child.close()
            if then_full is not None:
                then_full.close()
        self._attach(sock)
        if wait:
            self.wait_ready()

    @classmethod
    def forked(cls, sock: socket.socket, ready_timeout: float = 120.0) -> ZygoteLauncher:
        """The full zygote that a JAX-only one forks from itself (``then_full``), served over ``sock``.

        Not a child of the grader: it is gone when its socket closes (it exits when the grader closes its
        end, and the JAX-only zygote holds no copy), and its pid comes with its "ready" message.
        """
        self = cls.__new__(cls)
        self._ready_timeout = ready_timeout
        self._popen = None
        self._attach(sock)
        return self

    def _attach(self, sock: socket.socket) -> None:
        self._sock = sock
        self.pid = self._popen.pid if self._popen is not None else 0
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self._pending: dict[int, list[Any]] = {}
        self._procs: dict[int, Proc] = {}
        self._early_exit: dict[int, int] = {}
        self._ready = threading.Event()
        self.settled = threading.Event()  # it has imported all it will ("ready" for stage "all")
        self.imported: list[str] | None = None  # then: the modules of _warmup.PRELOAD it holds
        self._dead = False
        self._planned: set[str] = set()  # what its "ready" events said it meant to import, and what failed
        self._failed: dict[str, str] = {}
        self._finished = threading.Event()  # its imports are done (stage "all"), or it is gone
        self._all = False
        threading.Thread(target=self._reader, daemon=True).start()

    def wait_ready(self) -> None:
        """Waits until the zygote has imported its first stage.

        Raises:
            RuntimeError: it died or took longer than ``ready_timeout`` (it is stopped).
        """
        if not self._ready.wait(self._ready_timeout) or self._dead:
            self.close()
            raise RuntimeError("the zygote did not start")

    def _reader(self) -> None:
        while True:
            try:
                data = self._sock.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                self._dead = True
                self._ready.set()
                self._finished.set()
                with self._lock:
                    for slot in self._pending.values():
                        slot[1].set()
                return
            msg = json.loads(data)
            with self._lock:
                if msg["event"] == "ready":
                    self.pid = self.pid or int(msg.get("pid", 0))
                    self._planned.update(msg.get("planned") or ())
                    self._failed.update(msg.get("failed") or {})
                    if msg.get("stage") == "all":
                        self._all = True
                        self._finished.set()
                    self._ready.set()
                    if msg.get("stage") == "all":
                        self.imported = list(msg.get("imported", []))
                        self.settled.set()
                elif msg["event"] == "spawned":
                    slot = self._pending.pop(msg["id"], None)
                    if slot:
                        slot[0] = msg["pid"]
                        slot[1].set()
                elif msg["event"] == "exit":
                    proc = self._procs.pop(msg["pid"], None)
                    if proc is None:
                        self._early_exit[msg["pid"]] = msg["status"]
                    else:
                        proc.status = msg["status"]
                        proc.exited.set()

    @property
    def alive(self) -> bool:
        """Whether the zygote still serves requests."""
        return not self._dead and (self._popen is None or self._popen.poll() is None)

    def imports(self, timeout: float) -> tuple[set[str], dict[str, str]]:
        """What the zygote imported, once all its imports are done (its "ready" events' word).

        Args:
            timeout: seconds to wait for its last import.

        Returns:
            The modules it meant to import, and ``{module: "Type: first line"}`` for those that failed.

        Raises:
            RuntimeError: it died before its imports were done (a library that crashed it), or did not finish
                them within ``timeout`` (one that hangs): nothing can be said of what it imports.
        """
        if not self._finished.wait(timeout):
            raise RuntimeError(f"the zygote did not finish importing within {timeout:.0f} s")
        with self._lock:
            if not self._all:
                raise RuntimeError("the zygote died while importing")
            return set(self._planned), dict(self._failed)

    def spawn(self, spec: WorkerSpec, fds: tuple[int, int]) -> Proc:
        rid = next(self._ids)
        slot: list[Any] = [None, threading.Event()]
        with self._lock:
            self._pending[rid] = slot
        payload = json.dumps({"id": rid, "spec": spec}).encode()
        socket.send_fds(self._sock, [payload], list(fds))
        # a request needing the JAX stack waits in the zygote until it is imported
        if not slot[1].wait(120) or slot[0] is None:
            raise RuntimeError("the zygote did not fork a worker")
        proc = Proc(slot[0])
        with self._lock:
            if proc.pid in self._early_exit:
                proc.status = self._early_exit.pop(proc.pid)
                proc.exited.set()
            else:
                self._procs[proc.pid] = proc
        return proc

    def close(self) -> None:
        """Stops the zygote (it kills the workers it still has)."""
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        if self._popen is None:  # not our child: wait until it has exited (or is a zombie of its parent)
            deadline = time.monotonic() + 5
            while self.pid and _running(self.pid) and time.monotonic() < deadline:
                time.sleep(0.02)
            return
        try:
            self._popen.wait(5)
        except subprocess.TimeoutExpired:
            self._popen.kill()


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


class ZygotePair:
    """Two zygotes, one launcher: the JAX-only exercises' workers come from one that imports the JAX
    stack only (ready in ~0.8 s), the others from the full one, which that one forks from itself once
    ready and which then imports PyTorch (the JAX stack is imported once, not twice).

    On a lone submission the full zygote's ~2.5 s of imports otherwise leave a core idle: with the
    pair, JAX work starts on it while PyTorch still imports. Requests say ``needs: "jax"`` to go to
    the JAX one; any other goes to the full one. Only the JAX one is waited for here; the first
    request for the full one waits for it, and should it not start, its requests are spawned
    (:class:`SpawnLauncher`) instead.
    """

    kind = "zygote"

    def __init__(self, ready_timeout: float = 120.0, cpu_jax: bool = True, prefix: list[str] | None = None,
                 needs: frozenset[str] | None = None) -> None:
        """Starts both; ``needs``: what the full one imports and warms (see :class:`ZygoteLauncher`)."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.jax = ZygoteLauncher(ready_timeout, cpu_jax, prefix, jax_only=True, wait=False, then_full=theirs,
                                      needs=needs)
        except BaseException:
            mine.close()
            raise
        self.full = ZygoteLauncher.forked(mine, ready_timeout)
        try:
            self.jax.wait_ready()
        except BaseException:
            self.full.close()
            raise
        self._spawner = SpawnLauncher(cpu_jax=cpu_jax, prefix=prefix)
        self._full_ok: bool | None = None  # not known yet
        self._lock = threading.Lock()

    def _full(self) -> Any:
        """The full zygote once it is ready, else (it did not start) the spawning launcher."""
        with self._lock:
            if self._full_ok is None:
                try:
                    self.full.wait_ready()
                    self._full_ok = True
                except RuntimeError:
                    self._full_ok = False
            if self._full_ok and not self.full.alive:
                self._full_ok = False
            return self.full if self._full_ok else self._spawner

    @property
    def alive(self) -> bool:
        """Whether the JAX zygote still serves requests (the full one falls back by itself)."""
        return self.jax.alive

    def imports(self, timeout: float) -> tuple[set[str], dict[str, str]]:
        """What both zygotes imported (see :meth:`ZygoteLauncher.imports`): each one's failures are its own.

        Raises:
            RuntimeError: either died before its imports were done, or they took longer than ``timeout`` in all.
        """
        end = time.monotonic() + timeout
        planned, failed = self.jax.imports(timeout)
        more, also = self.full.imports(max(0.0, end - time.monotonic()))
        return planned | more, {**failed, **also}

    def spawn(self, spec: WorkerSpec, fds: tuple[int, int]) -> Proc:
        return (self.jax if spec.get("needs") == "jax" else self._full()).spawn(spec, fds)

    def close(self) -> None:
        """Stops both (each kills the workers it still has): the full one first, a child of the other."""
        self.full.close()
        self.jax.close()
