"""Grader side: the grader's handle on one worker process: its load status, its probes with a deadline, its death.

A launcher (``launch``) starts the process; :class:`Worker` then waits for its load status, runs probes
within working seconds (``watch``), lends it compiled programs (``compile_cache``) and, when it dies,
says how (:func:`describe_status`, the OOM killer's counter of ``envelope``). :func:`close_all` closes
workers together.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import time
from typing import Any

from autograder.core import wire as _wire
from autograder.probing import tools as _tools
from autograder.sandbox import pids_cgroup as _pids_cgroup
from autograder.sandbox import quota as _quota
from autograder.workers import compile_cache as _compile_cache
from autograder.workers import confirm as _confirm
from autograder.workers import envelope as _envelope
from autograder.workers import intake as _intake
from autograder.workers import watch as _watch
from autograder.workers.records import WorkerSpec


def _channel() -> tuple[int, int]:
    """A connected pair of Unix stream sockets, as two descriptors (not inheritable)."""
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    return a.detach(), b.detach()


def describe_status(status: int | None) -> str:
    """Turns a wait status into words a student can act on."""
    if status is None:
        return "it stopped answering"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        names = {signal.SIGSEGV: "segmentation fault", signal.SIGKILL: "killed",
                 signal.SIGABRT: "aborted", signal.SIGBUS: "bus error",
                 signal.SIGFPE: "floating-point exception", signal.SIGXFSZ: "file too large"}
        return f"{names.get(sig, 'signal')} (signal {sig})"
    if os.WIFEXITED(status):
        return f"exited with status {os.WEXITSTATUS(status)}"
    return "died"


# Tallies read while the grader waits for one answer: a probe counts a few hundred events (ex09's tape);
# a worker writing more floods the grader and is treated as broken.
MAX_TALLIES = 200_000

# why a worker's frames were not its loop's (WorkerDied "forged": ``how`` is one of these catalogue keys)
FORGED_TWICE = "forged.twice"
FORGED_RUNNING = "forged.running"
FORGED_BETWEEN = "forged.between"
FORGED_NESTED = "forged.nested"
FORGED_READER = "forged.reader"
# working seconds a worker's loop gets to echo a fence (it does at once: a read, a write); a worker whose own messages
# go elsewhere (a pipe it redirected) is found after this, not after the call's whole limit
FENCE_SECONDS = 5.0
# wall seconds a --device tpu worker may take to open the chip before its load (measured 7-10 s on a TPU v5e host)
CHIP_SECONDS = 120.0


class WorkerDied(Exception):
    """The worker did not answer: ``kind`` is ``timeout``, ``crashed``, ``broken`` (it broke the protocol),
    ``limit`` (killed over a cap: ``how`` is the message key) or ``forged`` (the grader read frames that the
    worker's own loop does not write: a second answer to one call, a frame between two calls; ``how`` is the
    catalogue key that says which: :data:`FORGED_TWICE`...)."""

    def __init__(self, kind: str, how: str, death: dict[str, Any] | None = None) -> None:
        super().__init__(f"{kind}: {how}")
        self.kind = kind
        self.how = how
        self.death = death  # for a crash: Worker.death (signal, OOM evidence, stderr tail)


class Forged(Exception):
    """The kernel showed the worker's commands read by something other than its loop (``how``: the
    ``forged.*`` catalogue key)."""

    def __init__(self, how: str) -> None:
        super().__init__(how)
        self.how = how


class Worker:
    """One worker process serving probes for one (submission or reference, exercise).

    Args:
        launcher: what starts the process (:class:`ZygotePair`, :class:`SpawnLauncher`...).
        spec: the worker's spec (:class:`autograder.workers.records.WorkerSpec`, read by ``_worker.worker_main``).
        load_timeout: seconds its module's load may take.
        lender: answers the worker's requests for compiled programs (``_compile_cache.Lender``) while
            the grader waits for its load or a probe; None answers every request with nothing.
        watch: measures the worker's scratch while it lives, kills it over the disk caps and deletes the
            scratch when it closes (``_quota.ScratchWatch``); None: not watched.
    """

    def __init__(self, launcher: Any, spec: WorkerSpec, load_timeout: float,
                 lender: _compile_cache.Lender | None = None, watch: _quota.ScratchWatch | None = None) -> None:
        # the worker's channels are socket pairs, not pipes: neither end can be opened again through /proc (a pipe's
        # can, as a write end that puts frames back into the loop's way), and the worker's end of each cannot read
        # what it writes (its answers) nor write what it reads (its commands): the grader's ends are the only others
        cmd_r, self._cmd_w = _channel()
        self._res_r, res_w = _channel()
        self._cmd_link = _confirm.pipe_link(cmd_r)  # what /proc/PID/fd shows for the worker's end
        self._owed = 0  # bytes of commands and fences sent since the last confirmation: the loop must read them all
        # a worker that stops reading its commands must not block the grader's writes (see _wire.send)
        os.set_blocking(self._cmd_w, False)
        self._lend = self._recording(lender.answer if lender is not None else _compile_cache.refuse)
        # the programs the worker asked for during the current call: what the grader itself saw it compile
        self.asked: list[str] = []
        # the probes' tallies the worker wrote during the current call (``_tools.tally``): counted here, in the
        # grader's process, as they arrived (a raw memory write in the worker cannot take one back)
        self.tallied: dict[str, int] = {}
        # whether the grader told it to ask for every program it compiles (the grader's word, not the worker's)
        self.borrows = bool(spec.get("borrow_compiles"))
        # the sandbox's own record, sent before the student's code ran (``_intake.isolation``); None: no sandbox
        self.isolation: dict[str, Any] | None = None
        sandbox = spec.get("sandbox")
        self.scratch: str | None = sandbox.get("scratch") if sandbox else None
        self._sandboxed = bool(spec.get("sandbox"))
        self.limit_hit: str | None = None  # the message key of a cap the watch killed it for
        self.time_accounting = ""  # how its last load or call was timed: "cgroup" or "process tree" (_watch.Budget)
        self._watch = watch if self.scratch else None
        self._phase = ""  # "serving": the grader works out an answer; "sending": it writes one (see _grader_behind)
        self._budget: _watch.Budget | None = None  # the current load's or call's (see _charge)
        self._loop: _confirm.LoopWatch | None = None  # where its loop waits (calibrated before student code)
        self.death: dict[str, Any] | None = None
        self.stderr = _watch.StderrTail()  # never shown to students: a dead worker's tail is the instructor's
        self._oom0 = _envelope.oom_kills(_envelope.current())
        # the load's limit: a section's top-level statements get their share of it (``_exec.top_level_budget``)
        spec = {**spec, "load_timeout": load_timeout}
        try:
            self.proc = launcher.spawn(spec, (cmd_r, res_w, self.stderr.write_fd))
        except BaseException:
            self.stderr.close()
            raise
        finally:
            os.close(cmd_r)
            os.close(res_w)
            self.stderr.close_writer()
        self.alive = True
        if self._watch is not None:
            self._watch.add(self)
        self.chip: dict[str, Any] | None = None  # a --device tpu worker's record of opening the chip (_intake.chip)
        if spec.get("chip") and not self._open_chip():
            return
        try:
            self.status: dict[str, Any] = self._await(load_timeout, receive=lambda deadline: self._first(spec, deadline))
        except Forged as err:  # its load's code stayed to read the grader's commands: nothing it says counts
            self.status = {"status": "loaded", "missing": [], "forged": err.how}
        except TimeoutError:
            self.kill()
            self.status = {"status": "timeout", "code": "LOAD_TIMEOUT", "fields": {"timeout": load_timeout}}
        except _wire.WireError as err:  # it broke the protocol: killed at once, it may be spinning
            self.kill()
            self.status = {"status": "crashed", "code": "WORKER_PROTOCOL", "fields": {"how": str(err)}}
        except (EOFError, OSError):
            how = self._diagnose("load")
            self.kill()
            self.status = {"status": "crashed", "code": "LOAD_CRASHED", "fields": {"how": how},
                           "death": self.death}
            if (self.death or {}).get("memory_cap"):  # killed at its own memory cgroup's cap: a MemoryError
                self.status.update(status="error", code="LOAD_MEMORY", fields={})
        if self.limit_hit:  # killed by the watch: that says why, whatever the pipe saw
            self.status = {"status": "error", "code": self.limit_hit, "fields": _quota.describe()}
        if self.status.get("status") != "loaded":
            self.close()

    def _open_chip(self) -> bool:
        """Reads the worker's chip record (``--device tpu``), sent before any student code ran, within
        :data:`CHIP_SECONDS` (the chip's start is not the student's load). A worker that could not open it is closed
        with the status ``chip_unavailable``: the grader's trouble (``autograder.engine.chip``), never the student's.

        Returns:
            Whether the chip is open in the worker.
        """
        try:
            self.chip = _intake.chip(self._recv(time.monotonic() + CHIP_SECONDS))
        except (TimeoutError, EOFError, OSError, _wire.WireError) as err:
            self.chip = {"status": "chip", "ok": False, "seconds": 0.0, "how": f"no chip record: {type(err).__name__}"}
        if self.chip["ok"]:
            return True
        self.status = {"status": "chip_unavailable", "code": "CHIP_UNAVAILABLE", "fields": {"how": self.chip["how"]}}
        self.close()
        return False

    def _first(self, spec: WorkerSpec, deadline: float) -> dict[str, Any]:
        """The worker's load status, checked (``_intake``); a sandboxed worker's isolation record first."""
        if spec.get("role") == "isolation":
            return _intake.isolation(self._recv(deadline))
        if spec.get("sandbox"):
            self.isolation = _intake.isolation(self._recv(deadline), "sandboxed")["isolation"]
        if spec.get("calibrate"):  # its loop's reads, seen by the kernel before any student code ran
            self._loop = _confirm.calibrate(self.proc.pid, self.isolation, self._cmd_link,
                                            lambda: _wire.send(self._cmd_w, {"calibrate": 1}, deadline),
                                            min(deadline, time.monotonic() + _confirm.CALIBRATION_SECONDS))
        status = _intake.status(self._recv(deadline))
        if status.get("status") == "loaded":
            self._confirmed(FENCE_SECONDS)  # its load's code may have stayed to read the commands
        return status

    def _grader_behind(self) -> bool:
        """Whether the worker now waits for the grader (not its own time): the grader is working out an
        answer for it, or has its message unread (unless the grader is stuck writing to a worker that does
        not read: then the worker's time runs)."""
        if self._phase == "serving":
            return True
        return self._phase != "sending" and _watch.pending(self._res_r) > 0

    def _await(self, limit: float, send: dict[str, Any] | None = None, receive: Any = None) -> Any:
        """Sends ``send`` (if any) and returns the worker's next message (or what ``receive(deadline)``
        returns), within ``limit`` working seconds (``_watch``; a wall-clock cap of ``_watch.wall_cap(limit)``
        as a last resort).

        Raises:
            TimeoutError: the limit (or the cap) was reached; the worker is killed.
            EOFError, OSError, _wire.WireError: it died or sent garbage.
        """
        budget = _watch.Budget(self.proc.pid, limit, self.proc.kill, self._grader_behind,
                               lambda: (self.isolation or {}).get("cpu_cgroup"))
        self._budget = budget  # charged with the grader's own work on what the worker sends (_recv)
        deadline = time.monotonic() + _watch.wall_cap(limit)
        with _watch.watching(budget):
            try:
                if send is not None:
                    self._phase = "sending"
                    try:
                        data = _wire.frame(send)
                        self._owed += len(data)
                        _wire.send_frame(self._cmd_w, data, deadline)
                    finally:
                        self._phase = ""
                return receive(deadline) if receive is not None else self._recv(deadline)
            except (EOFError, OSError, _wire.WireError):
                if budget.expired:  # killed by the watcher: its time was up
                    raise TimeoutError(f"{limit:g} working seconds") from None
                raise
            finally:
                self.time_accounting = budget.accounting

    def _diagnose(self, phase: str) -> str:
        """After the worker died: how (for the student's message), and :attr:`death` for the grader.

        ``death`` holds ``how``, ``signal`` (or None), ``oom`` (True when it died by SIGKILL and the kernel's
        OOM killer took it from above its own cap: the grader's trouble; None when that cannot be read),
        ``memory_cap`` (True when it died by SIGKILL having reached its own memory cgroup's cap: the
        student's), for a student's worker killed so its ``memory_accounting`` (``cgroup`` or ``process``),
        ``phase`` (``load`` or ``call``) and the tail of its stderr. Both are judged from what the grader
        reads (:func:`_envelope.judge_kill`): the OOM-kill counters of the container and the machine, and
        those of the worker's memory cgroup, read before it is removed.
        """
        status = self.proc.wait(3)
        how = describe_status(status)
        sig = os.WTERMSIG(status) if status is not None and os.WIFSIGNALED(status) else None
        verdict: dict[str, Any] = {"oom": None if self._oom0 is None else False, "memory_cap": False}
        if sig == signal.SIGKILL:
            now = _envelope.oom_kills(_envelope.current())
            rose = None if now is None or self._oom0 is None else now > self._oom0
            iso = self.isolation or {}
            accounting = (str(iso.get("memory_accounting") or "process")) if self._sandboxed else None
            own = _pids_cgroup.memory_events(iso.get("memory_cgroup")) if accounting == "cgroup" else None
            verdict = _envelope.judge_kill(accounting, own, rose)
            if accounting:
                verdict["memory_accounting"] = accounting
        self.death = {"how": how, "signal": sig, **verdict, "phase": phase, "stderr": self.stderr.text()}
        return how

    def call(self, probe: str, kwargs: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Runs one probe; returns the worker's response.

        ``timeout`` is in working seconds (see :meth:`_await`): load on the machine does not shorten it.

        Raises:
            WorkerDied: the probe timed out, the process died, or it sent garbage.
        """
        if not self.alive:
            raise WorkerDied("broken", "the worker is gone")
        stale = self._between_calls()
        if stale:
            self.kill()
            raise WorkerDied("forged", stale)
        self.asked = []
        self.tallied = {}
        fenced = False
        try:
            resp = _intake.response(self._await(timeout, send={"probe": probe, "kwargs": kwargs}))
            fenced = True
            self._fence(timeout)
            return resp
        except Forged as err:
            raise WorkerDied("forged", err.how) from None
        except TimeoutError:
            self.kill()
            if fenced:  # it answered, then kept running instead of reading its next command
                raise WorkerDied("forged", FORGED_RUNNING) from None
            raise WorkerDied("timeout", f"{timeout:g} s") from None
        except (EOFError, BrokenPipeError, OSError):
            how = self._diagnose("call")
            self.kill()
            if self.limit_hit:
                raise WorkerDied("limit", self.limit_hit) from None
            raise WorkerDied("crashed", how, self.death) from None
        except _wire.WireError as err:
            self.kill()
            raise WorkerDied("forged" if fenced else "broken", FORGED_TWICE if fenced else str(err)) from None

    def _fence(self, timeout: float) -> None:
        """After an answer: sends a fresh nonce and reads up to its echo, which the worker's loop writes as it
        reads its next command. Tallies and compile requests on the way belong to the call that answered
        (counted, served); anything else is a second answer.

        Raises:
            WireError: a frame other than the echo of this nonce came.
            TimeoutError, EOFError, OSError: as :meth:`_await`.
        """
        nonce = secrets.token_hex(16)
        echo = self._await(min(timeout, FENCE_SECONDS), send={_wire.FENCE: nonce})
        if not (isinstance(echo, dict) and len(echo) == 1 and echo.get(_wire.FENCE) == nonce):
            raise _wire.WireError(FORGED_TWICE)
        self._confirmed(min(timeout, FENCE_SECONDS))

    def _confirmed(self, limit: float) -> None:
        """Before the grader sends anything more: the kernel shows the worker's loop, not code inside a call or
        another thread, waiting for the next command (``_confirm``; nothing to check where calibration could
        not read the worker's threads).

        Raises:
            Forged: it does not (the worker is killed).
        """
        if self._loop is None:
            return
        how = self._loop.confirm(time.monotonic() + _watch.wall_cap(limit), self._owed)
        self._owed = 0
        if how is not None:
            self.kill()
            raise Forged(how)

    def settle(self, timeout: float) -> str | None:
        """After a student's worker's last call, before it closes: one more fence, so that frames written after
        the last call's answer are read too (a call's forged answer followed by the real one, late).

        Args:
            timeout: working seconds the echo may take (an honest worker's loop echoes at once).

        Returns:
            None when only tallies came before the echo (or the worker is gone: a death after its last call is
            left as it is); else the ``forged.*`` catalogue key of what came (:data:`FORGED_BETWEEN`,
            :data:`FORGED_RUNNING`). The worker is killed then.
        """
        if not self.alive:
            return None
        how = self._between_calls()
        try:
            if how is None:
                self._fence(timeout)
        except Forged as err:
            how = err.how
        except TimeoutError:
            how = FORGED_RUNNING
        except _wire.WireError:
            how = FORGED_BETWEEN
        except (EOFError, OSError):
            return None
        if how is not None:
            self.kill()
        return how

    def _between_calls(self) -> str | None:
        """What waits on the result pipe before a request (None: nothing, as after every honest call): frames
        written after the last call's fence. Tallies there belong to no call and are dropped; any other frame
        was written beside the worker's loop (why, in the grader's words)."""
        if _watch.pending(self._res_r) <= 0:
            return None
        deadline = time.monotonic() + 1.0
        try:
            while _watch.pending(self._res_r) > 0:
                if not _tools.is_tally(_wire.recv(self._res_r, deadline)):
                    return FORGED_BETWEEN
        except (EOFError, OSError, TimeoutError, _wire.WireError):
            return FORGED_BETWEEN
        return None

    def _recv(self, deadline: float) -> Any:
        """The worker's next message that is not a request for a compiled program nor a tally; requests are
        answered meanwhile (``_compile_cache``), all before ``deadline``, at most
        :data:`_compile_cache.MAX_REQUESTS` of them, and tallies counted in :attr:`tallied`, at most
        :data:`MAX_TALLIES` (a worker sending more is broken)."""
        requests = tallies = 0
        while requests < _compile_cache.MAX_REQUESTS:
            started = time.thread_time()
            msg = _wire.recv(self._res_r, deadline)
            if _tools.is_tally(msg) or _compile_cache.is_request(msg):
                # the grader's CPU on a frame sent before the answer is the worker's time (a flood of large frames
                # kept the grader busy, the worker "waiting for it": _watch.Budget.charge); the answer's is not
                # (charged after it came, it could stop a worker that finished in time)
                self._charge(time.thread_time() - started)
            if _tools.is_tally(msg):
                tallies += 1
                if tallies > MAX_TALLIES:
                    raise _wire.WireError(f"more than {MAX_TALLIES} tallies in one call")
                name = msg[_tools.TALLY]
                self.tallied[name] = self.tallied.get(name, 0) + 1
                continue
            if not _compile_cache.is_request(msg):
                return msg
            requests += 1
            self._phase = "serving"  # the grader works out the answer: not the worker's time (but its CPU is)
            started = time.thread_time()
            try:
                answer = self._lend(msg)
            finally:
                self._charge(time.thread_time() - started)
                self._phase = "sending"  # a worker that does not read it: its own time
            try:
                _wire.send(self._cmd_w, answer, deadline)
            finally:
                self._phase = ""
        raise _wire.WireError(f"more than {_compile_cache.MAX_REQUESTS} requests for compiled programs in one call")

    def _charge(self, seconds: float) -> None:
        """Charges the current load's or call's budget with the grader's CPU spent on the worker's behalf."""
        if self._budget is not None:
            self._budget.charge(seconds)

    def _recording(self, answer: Any) -> Any:
        """``answer`` for the compile-cache requests, noting each key asked in :attr:`asked`."""

        def lend(msg: dict[str, Any]) -> dict[str, Any]:
            key = msg.get(_compile_cache.REQUEST)
            self.asked.append(key[:80] if isinstance(key, str) else "")
            return answer(msg)

        return lend

    def kill(self) -> None:
        """Kills the worker and releases its pipes."""
        self.proc.kill()
        self.close()

    def close(self) -> None:
        """Closes the pipes (the worker exits on EOF), then kills what is left of its process group:
        without a pid namespace, processes the student's code started would outlive it."""
        close_all([self])

    def _release(self) -> bool:
        """Closes the pipes; whether the worker was still open."""
        if not self.alive:
            return False
        self.alive = False
        self.stderr.close()
        for fd in (self._cmd_w, self._res_r):
            try:
                os.close(fd)
            except OSError:
                pass
        return True


def close_all(workers: list[Worker], grace: float = 0.5) -> None:
    """Closes workers together: every pipe first, so they all exit at once, then waits up to ``grace``
    seconds in all for their exits and kills what is left of each one's process group.

    Args:
        workers: the workers (closed ones are skipped).
        grace: seconds the workers get, together, to exit on their own.
    """
    closing = [w for w in workers if w._release()]
    deadline = time.monotonic() + grace
    for w in closing:
        w.proc.wait(max(0.0, deadline - time.monotonic()))
        w.proc.kill()
        if (getattr(w, "chip", None) or {}).get("ok"):  # its TPU chip is free once it has ended (engine.chip)
            w.proc.wait(CHIP_SECONDS)
        watch = getattr(w, "_watch", None)
        if watch is not None:
            watch.remove(w)  # and what it wrote goes now, not at the end of the run
        status = getattr(w, "status", None)  # none yet when it died before its load status came
        _quota.release_cgroup(getattr(w, "isolation", None)
                              or (status.get("isolation") if isinstance(status, dict) else None))
