"""Starting, talking to and killing workers (grader side).

Launchers with one interface: :class:`ZygoteLauncher` forks workers from
a warm process (fast), :class:`ZygotePair` runs two of them (JAX-only work
starts while PyTorch imports), :class:`SpawnLauncher` starts a fresh
interpreter per worker (portable fallback). :class:`Worker` wraps one worker: it waits for the
load status, runs probes with a deadline, and describes deaths.
"""

from __future__ import annotations

import functools
import glob
import importlib.util
import itertools
import json
import mmap
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any

from autograder.core import wire as _wire
from autograder.core.paths import ROOT
from autograder.sandbox import quota as _quota
from autograder.workers import compile_cache as _compile_cache
from autograder.workers import envelope as _envelope
from autograder.workers import intake as _intake
from autograder.workers import watch as _watch

# XLA's compile options for a CPU run. Grading compiles hundreds of small programs per exercise
# (eager ops at new shapes, jitted student functions) that then run a few times, so compile time
# is most of a submission's cost. LLVM at level 0 and XLA's classic elemental emitters instead of
# its MLIR fusion emitters cut it ~45% (a lone submission's XLA compile 22.3 -> ~12 CPU-s; see
# benchmarks/profile_lone.py); the few compute-heavy loops the probes jit themselves ask for level 2
# back (``compiler_options``, see _probing.FAST_RUN). Reference and student run under the same
# flags, so verdicts compare like with like; neither flag relaxes floating-point semantics.
CPU_COMPILE_FLAGS: tuple[str, ...] = ("--xla_backend_optimization_level=0", "--xla_cpu_use_fusion_emitters=false")


@functools.lru_cache(maxsize=1)
def _xla_knows() -> frozenset[str]:
    """The flags of :data:`CPU_COMPILE_FLAGS` this jaxlib's XLA defines (their names are in its binaries).

    XLA aborts the process on a flag it does not know, and pyproject.toml admits older jaxlibs than
    the one these were measured with: an unknown one is left out rather than crash every JAX worker.
    Reads jaxlib's shared libraries without importing jaxlib (~20 ms).
    """
    names = {f.split("=")[0].lstrip("-").encode(): f for f in CPU_COMPILE_FLAGS}
    found: set[str] = set()
    spec = importlib.util.find_spec("jaxlib")
    if spec is None or not spec.origin:
        return frozenset()
    for lib in glob.glob(os.path.join(os.path.dirname(spec.origin), "**", "*.so"), recursive=True):
        try:
            with open(lib, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mem:
                for name, flag in names.items():
                    if flag not in found and mem.find(name) != -1:
                        found.add(flag)
        except (OSError, ValueError):  # unreadable, or empty (mmap of 0 bytes)
            continue
    return frozenset(found)


CPUS_ENV = "TAPETRACE_WORKER_CPUS"


def keep_to_planned_cpus() -> None:
    """Run on the CPUs :func:`worker_env` names (a zygote or a spawned worker calls it first thing)."""
    text = os.environ.get(CPUS_ENV, "")
    if text and hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {int(c) for c in text.split(",")})
        except (OSError, ValueError):
            pass


def worker_env(cpu_jax: bool = True) -> dict[str, str]:
    """Environment for workers and the zygote: one thread each, quiet XLA.

    Args:
        cpu_jax: the run's JAX device is the CPU (adds :data:`CPU_COMPILE_FLAGS`; a GPU/TPU run
            keeps XLA's defaults, whose kernels matter there).
    """
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = "1"
    # Ours go first and every one is a ``--flag``: XLA's parser stops at the first token that is not,
    # silently ignoring all after it (a bare ``intra_op_parallelism_threads=1`` once sat before
    # CPU_COMPILE_FLAGS here and switched level 0 off). The user's own flags follow, unchanged.
    user = env.get("XLA_FLAGS", "").split()
    ours = []
    if not any(f.startswith("--xla_cpu_multi_thread_eigen") for f in user):
        ours.append("--xla_cpu_multi_thread_eigen=false")
    if cpu_jax:
        known = _xla_knows()
        ours += [f for f in CPU_COMPILE_FLAGS
                 if f in known and not any(u.startswith(f.split("=")[0] + "=") for u in user)]
    env["XLA_FLAGS"] = " ".join([*ours, *user])
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    # On a GPU box a student's and the reference's JAX workers (and torch in the same worker) share
    # one GPU: JAX's default preallocation of 75% of its memory per process would starve the others.
    env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    # glibc gives each thread that mallocs its own 64 MiB arena: XLA's ~15 threads reserve ~1 GiB of
    # address space a worker never touches, which a memory cap on address space (_sandbox) would have
    # to allow. Two arenas keep the reservation near what is used (measured: see _envelope.plan).
    env.setdefault("MALLOC_ARENA_MAX", "2")
    # under a CPU quota, a few of the visible CPUs (_envelope.plan): XLA sizes its thread pools from them
    cpus = _envelope.plan(_envelope.current()).worker_cpus
    if cpus:
        env[CPUS_ENV] = ",".join(map(str, cpus))
    env["PYTHONPATH"] = str(ROOT)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTHONSTARTUP", None)
    return env


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

    def spawn(self, spec: dict[str, Any], fds: tuple[int, ...]) -> Proc:
        """Starts a worker with ``fds``: its command and result pipes, and optionally its stderr's."""
        popen = subprocess.Popen(
            [*self.prefix, sys.executable, "-m", "autograder.workers.worker", str(fds[0]), str(fds[1]), json.dumps(spec)],
            pass_fds=fds[:2], env=worker_env(self.cpu_jax), cwd=str(ROOT), start_new_session=True,
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
                 jax_only: bool = False, wait: bool = True, then_full: socket.socket | None = None) -> None:
        """Starts the zygote.

        Args:
            ready_timeout: seconds its imports may take.
            cpu_jax: the run's JAX device is the CPU (see :func:`worker_env`).
            prefix: a command the zygote runs under (e.g. ``setpriv`` dropping CAP_SYS_ADMIN, to grade
                as in a container with Docker's default privileges).
            jax_only: import the JAX stack only (``_zygote.JAX_ONLY``), for :class:`ZygotePair`.
            wait: wait until it is ready (else call :meth:`wait_ready`).
            then_full: with ``jax_only``, the zygote's end of a socket pair: once ready, the zygote forks
                the full one from itself to serve it (see :meth:`forked`). Closed here.
        """
        self._ready_timeout = ready_timeout
        sock, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fds = (child.fileno(), *([then_full.fileno()] if then_full is not None else []))
        extra = ["--jax-only"] if jax_only else []
        if then_full is not None:
            extra += ["--then-full", str(then_full.fileno())]
        try:
            self._popen: subprocess.Popen | None = subprocess.Popen(
                [*(prefix or []), sys.executable, "-m", "autograder.workers.zygote", str(child.fileno()), *extra],
                pass_fds=fds, env=worker_env(cpu_jax), cwd=str(ROOT), start_new_session=True,
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
        self._dead = False
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
                with self._lock:
                    for slot in self._pending.values():
                        slot[1].set()
                return
            msg = json.loads(data)
            with self._lock:
                if msg["event"] == "ready":
                    self.pid = self.pid or int(msg.get("pid", 0))
                    self._ready.set()
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

    def spawn(self, spec: dict[str, Any], fds: tuple[int, int]) -> Proc:
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

    def __init__(self, ready_timeout: float = 120.0, cpu_jax: bool = True, prefix: list[str] | None = None) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.jax = ZygoteLauncher(ready_timeout, cpu_jax, prefix, jax_only=True, wait=False, then_full=theirs)
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

    def spawn(self, spec: dict[str, Any], fds: tuple[int, int]) -> Proc:
        return (self.jax if spec.get("needs") == "jax" else self._full()).spawn(spec, fds)

    def close(self) -> None:
        """Stops both (each kills the workers it still has): the full one first, a child of the other."""
        self.full.close()
        self.jax.close()


class WorkerDied(Exception):
    """The worker did not answer: ``kind`` is ``timeout``, ``crashed``, ``broken`` (it broke the protocol) or
    ``limit`` (killed over a cap: ``how`` is the message key)."""

    def __init__(self, kind: str, how: str, death: dict[str, Any] | None = None) -> None:
        super().__init__(f"{kind}: {how}")
        self.kind = kind
        self.how = how
        self.death = death  # for a crash: Worker.death (signal, OOM evidence, stderr tail)


class Worker:
    """One worker process serving probes for one (submission or reference, exercise).

    Args:
        launcher: what starts the process (:class:`ZygotePair`, :class:`SpawnLauncher`...).
        spec: the worker's spec (``_worker.worker_main``).
        load_timeout: seconds its module's load may take.
        lender: answers the worker's requests for compiled programs (``_compile_cache.Lender``) while
            the grader waits for its load or a probe; None answers every request with nothing.
        watch: measures the worker's scratch while it lives, kills it over the disk caps and deletes the
            scratch when it closes (``_quota.ScratchWatch``); None: not watched.
    """

    def __init__(self, launcher: Any, spec: dict[str, Any], load_timeout: float,
                 lender: _compile_cache.Lender | None = None, watch: _quota.ScratchWatch | None = None) -> None:
        cmd_r, self._cmd_w = os.pipe()
        self._res_r, res_w = os.pipe()
        # a worker that stops reading its commands must not block the grader's writes (see _wire.send)
        os.set_blocking(self._cmd_w, False)
        self._lend = self._recording(lender.answer if lender is not None else _compile_cache.refuse)
        # the programs the worker asked for during the current call: what the grader itself saw it compile
        self.asked: list[str] = []
        # whether the grader told it to ask for every program it compiles (the grader's word, not the worker's)
        self.borrows = bool(spec.get("borrow_compiles"))
        # the sandbox's own record, sent before the student's code ran (``_intake.isolation``); None: no sandbox
        self.isolation: dict[str, Any] | None = None
        self.scratch: str | None = (spec.get("sandbox") or {}).get("scratch")
        self.limit_hit: str | None = None  # the message key of a cap the watch killed it for
        self._watch = watch if self.scratch else None
        self._phase = ""  # "serving": the grader works out an answer; "sending": it writes one (see _grader_behind)
        self.death: dict[str, Any] | None = None
        self.stderr = _watch.StderrTail()  # never shown to students: a dead worker's tail is the instructor's
        self._oom0 = _envelope.oom_kills(_envelope.current())
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
        try:
            self.status: dict[str, Any] = self._await(load_timeout, receive=lambda deadline: self._first(spec, deadline))
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
        if self.limit_hit:  # killed by the watch: that says why, whatever the pipe saw
            self.status = {"status": "error", "code": self.limit_hit, "fields": _quota.describe()}
        if self.status.get("status") != "loaded":
            self.close()

    def _first(self, spec: dict[str, Any], deadline: float) -> dict[str, Any]:
        """The worker's load status, checked (``_intake``); a sandboxed worker's isolation record first."""
        if spec.get("role") == "isolation":
            return _intake.isolation(self._recv(deadline))
        if spec.get("sandbox"):
            self.isolation = _intake.isolation(self._recv(deadline), "sandboxed")["isolation"]
        return _intake.status(self._recv(deadline))

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
        budget = _watch.Budget(self.proc.pid, limit, self.proc.kill, self._grader_behind)
        deadline = time.monotonic() + _watch.wall_cap(limit)
        with _watch.watching(budget):
            try:
                if send is not None:
                    self._phase = "sending"
                    try:
                        _wire.send(self._cmd_w, send, deadline)
                    finally:
                        self._phase = ""
                return receive(deadline) if receive is not None else self._recv(deadline)
            except (EOFError, OSError, _wire.WireError):
                if budget.expired:  # killed by the watcher: its time was up
                    raise TimeoutError(f"{limit:g} working seconds") from None
                raise

    def _diagnose(self, phase: str) -> str:
        """After the worker died: how (for the student's message), and :attr:`death` for the grader.

        ``death`` holds ``how``, ``signal`` (or None), ``oom`` (True when it died by SIGKILL while the
        kernel's OOM-kill counter rose since it started, None when the counter cannot be read),
        ``phase`` (``load`` or ``call``) and the tail of its stderr.
        """
        status = self.proc.wait(3)
        how = describe_status(status)
        sig = os.WTERMSIG(status) if status is not None and os.WIFSIGNALED(status) else None
        oom = None
        if sig == signal.SIGKILL:
            now = _envelope.oom_kills(_envelope.current())
            oom = None if now is None or self._oom0 is None else now > self._oom0
        elif self._oom0 is not None:
            oom = False
        self.death = {"how": how, "signal": sig, "oom": oom, "phase": phase, "stderr": self.stderr.text()}
        return how

    def call(self, probe: str, kwargs: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Runs one probe; returns the worker's response.

        ``timeout`` is in working seconds (see :meth:`_await`): load on the machine does not shorten it.

        Raises:
            WorkerDied: the probe timed out, the process died, or it sent garbage.
        """
        if not self.alive:
            raise WorkerDied("broken", "the worker is gone")
        self.asked = []
        try:
            return _intake.response(self._await(timeout, send={"probe": probe, "kwargs": kwargs}))
        except TimeoutError:
            self.kill()
            raise WorkerDied("timeout", f"{timeout:g} s") from None
        except (EOFError, BrokenPipeError, OSError):
            how = self._diagnose("call")
            self.kill()
            if self.limit_hit:
                raise WorkerDied("limit", self.limit_hit) from None
            raise WorkerDied("crashed", how, self.death) from None
        except _wire.WireError as err:
            self.kill()
            raise WorkerDied("broken", str(err)) from None

    def _recv(self, deadline: float) -> Any:
        """The worker's next message that is not a request for a compiled program; those are answered
        meanwhile (``_compile_cache``), all before ``deadline``, at most
        :data:`_compile_cache.MAX_REQUESTS` of them (a worker asking for more is broken)."""
        for _ in range(_compile_cache.MAX_REQUESTS):
            msg = _wire.recv(self._res_r, deadline)
            if not _compile_cache.is_request(msg):
                return msg
            self._phase = "serving"  # the grader works out the answer: not the worker's time
            try:
                answer = self._lend(msg)
            finally:
                self._phase = "sending"  # a worker that does not read it: its own time
            try:
                _wire.send(self._cmd_w, answer, deadline)
            finally:
                self._phase = ""
        raise _wire.WireError(f"more than {_compile_cache.MAX_REQUESTS} requests for compiled programs in one call")

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
        watch = getattr(w, "_watch", None)
        if watch is not None:
            watch.remove(w)  # and what it wrote goes now, not at the end of the run
        status = getattr(w, "status", None)  # none yet when it died before its load status came
        _quota.release_cgroup(getattr(w, "isolation", None)
                              or (status.get("isolation") if isinstance(status, dict) else None))
