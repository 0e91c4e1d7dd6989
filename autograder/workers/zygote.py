"""A warm fork server for workers.

Importing torch, jax, flax and optax costs ~4 s per process on CPU. The
zygote imports them once (single-threaded: BLAS pinned to one thread, no
backend initialised, no CUDA context), then forks one worker per request.
It imports in two stages: numpy + torch first ("ready", stage "torch"),
after which requests whose spec says ``needs: "torch"`` (the PyTorch-only
exercises) are forked between the following imports (never during one),
so they run on another core while the JAX stack loads; other requests wait
for stage "all".
With ``--jax-only`` it imports the JAX stack only and forks at once; with
``--then-full FD`` as well, it then forks the full zygote from itself, which
goes on to import PyTorch and serves FD (``_launch.ZygotePair``): the
JAX-only exercises start while PyTorch is still importing, and the JAX stack
is imported once, not in both (~1 CPU-s per run).
Each child initialises its own backend after the fork, so nothing
fork-unsafe is shared. Requests arrive over a SOCK_SEQPACKET socket with the
worker's two pipe ends attached (SCM_RIGHTS); exits are reported back.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import select
import signal
import socket
import sys
import tempfile
import time
from typing import Any, NoReturn

PRELOAD = ("numpy", "torch", "torch._dynamo", "jax", "jax.numpy", "flax.linen", "optax")
# ``--jax-only``: a second zygote, started beside the first, that imports only this (~0.8 s) and
# serves the JAX-only exercises (``needs: "jax"``) while the first one is still importing PyTorch.
JAX_ONLY = ("numpy", "jax", "jax.numpy", "flax.linen", "optax")
# Imported first: the PyTorch-only exercises (``needs: "torch"``) are forked as soon as these are
# in, on the other core, while the zygote goes on importing the JAX stack (~2.5 s on CPU).
# torch._dynamo (torch.compile, ex11: ~1.3 s to import) is paid here once, not in every ex11 worker.
TORCH_STAGE = ("numpy", "torch", "torch._dynamo")


def _preload(names: tuple[str, ...] | list[str], between: Any = None) -> None:
    for name in names:
        if between is not None:
            between()
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a missing optional framework is fine
            pass


def _warm_torch() -> None:
    """Pays once what the first optimizer/backward costs in every worker (~800 modules).

    Stays fork-safe: CPU only, one thread, no CUDA context (checked by a test).
    """
    try:
        import torch
        import torch.func  # noqa: F401

        torch.set_num_threads(1)
        layer = torch.nn.Linear(2, 2)
        opt = torch.optim.Adam(layer.parameters(), lr=0.1)
        layer(torch.zeros(1, 2)).sum().backward()
        opt.step()
    except Exception:  # noqa: BLE001 - warming is an optimisation only
        pass


def _warm_dynamo() -> None:
    """Pays once what a worker's first ``torch.compile`` costs (~0.8 s of one-time set-up in Dynamo and
    AOTAutograd: decomposition tables, lazy imports), then forgets the warm-up itself: every compiled
    frame, guard and counter (ex11's probes reset them again before each probe anyway). Runs in the
    full zygote while the JAX one already serves the JAX-only exercises (``_launch.ZygotePair``)."""
    try:
        import torch
        import torch._dynamo
        import torch._dynamo.utils

        _no_guard_profiling()

        def warm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.linear(x, w).relu().sum()

        w = torch.ones(3, 4, requires_grad=True)
        with _no_tqdm_monitor():  # AOTAutograd makes a tqdm bar: its monitor thread would outlive it
            torch.compile(warm, backend="aot_eager")(torch.ones(2, 4), w).backward()
            torch.compile(warm, backend="eager")(torch.ones(2, 4), w)
        torch._dynamo.reset()
        torch._dynamo.utils.counters.clear()
    except Exception:  # noqa: BLE001 - warming is an optimisation only
        pass


def _no_guard_profiling() -> None:
    """Dynamo times every new guard set for its compile metrics (``guard_latency_us``) after flushing the
    CPU cache with a fresh buffer: ~30 ms and ~8,000 page faults per compiled frame, ~0.5 s per ex11
    worker. Nothing reads that metric here (not the probes, not the checks) and the guards themselves
    are untouched, so the profiler is replaced by one that reports 0 us, for every worker this forks."""
    import torch._dynamo.guards as guards

    if hasattr(guards, "profile_guard_manager"):
        guards.profile_guard_manager = _zero_latency


def _zero_latency(*_args: Any) -> float:
    return 0.0


@contextlib.contextmanager
def _no_tqdm_monitor() -> Any:
    """tqdm starts no monitor thread meanwhile: the zygote forks, so it stays single-threaded. Nor does it
    make its process-shared lock (a semaphore in /dev/shm, mapped into every worker forked afterwards: a
    worker that took it and exited blocked every later one that draws a bar, e.g. AOTAutograd's); a
    worker's tqdm locks its own threads only (its output goes nowhere)."""
    try:
        from tqdm import tqdm
        from tqdm.std import TqdmDefaultWriteLock
    except ImportError:
        yield
        return
    if not hasattr(TqdmDefaultWriteLock, "mp_lock"):
        TqdmDefaultWriteLock.mp_lock = None  # what tqdm itself keeps where multiprocessing has no lock
    interval, tqdm.monitor_interval = tqdm.monitor_interval, 0
    try:
        yield
    finally:
        tqdm.monitor_interval = interval


def _worker_modules() -> None:
    """What every child runs: the worker, the sandbox every student's worker applies, the compile cache's
    borrower, the datasets, and (once JAX is imported) the JAX set-up of ``_jaxtune``."""
    import autograder.workers.compile_cache  # noqa: F401
    import autograder.workers.worker  # noqa: F401
    from autograder.core import data as _data
    from autograder.sandbox import isolate as _sandbox
    from autograder.workers import jaxtune as _jaxtune

    _sandbox.preload()
    _jaxtune.reuse_mlir_contexts()
    with contextlib.suppress(OSError):  # a student's worker reads them before its sandbox (see _worker)
        _data._all()


def _settle() -> None:
    """Once everything is imported: what the zygote holds stays out of every later garbage collection.

    The zygote imports with the cyclic collector off (its passes over the growing heap cost ~0.5 of
    ~4 CPU-s of imports; the cycles left behind are a few MB, shared with the workers), then freezes
    what it holds: neither it nor a worker scans those objects again, so a worker's collections stay
    small and write nothing into the pages it shares with the zygote. Workers collect as usual (the
    fork turns the collector back on).
    """
    gc.freeze()
    gc.enable()


def _jaxtune_now() -> None:
    """The JAX set-up of ``_jaxtune`` once JAX is imported (a full zygote imports it after its workers' modules)."""
    from autograder.workers import jaxtune as _jaxtune

    _jaxtune.reuse_mlir_contexts()


PROT_NONE, PROT_READ, PROT_WRITE, PROT_EXEC = 0, 1, 2, 4
MAP_PRIVATE, MAP_FIXED, MAP_ANONYMOUS = 0x02, 0x10, 0x20


def private_memory() -> int:
    """In a worker just forked: makes every shared mapping it inherited its own (returns how many).

    A shared mapping (``MAP_SHARED``: a semaphore in /dev/shm, a shared file or memory region that a
    library made while the zygote warmed up) stays shared across fork: what one worker writes there,
    every other worker forked from the same zygote sees, and a lock one takes and never releases
    blocks them all. Each one is replaced, at the same address, by private memory holding the same
    bytes with the same protection (Python objects pointing there keep working). Runs before any
    student code, single-threaded; the zygote itself holds no such lock (see ``_no_tqdm_monitor``).
    """
    import ctypes

    from autograder.sandbox.libc import c_library

    libc = c_library()
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    with open("/proc/self/maps") as fh:
        shared = [line.split() for line in fh if line.split()[1][3:4] == "s"]
    for fields in shared:
        lo, hi = (int(x, 16) for x in fields[0].split("-"))
        perms = fields[1]
        prot = (PROT_READ if perms[0] == "r" else 0) | (PROT_WRITE if perms[1] == "w" else 0) \
            | (PROT_EXEC if perms[2] == "x" else 0)
        saved = ctypes.string_at(lo, hi - lo) if perms[0] == "r" else None
        got = libc.mmap(lo, hi - lo, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0)
        if got != lo:
            raise OSError(ctypes.get_errno(), f"cannot make the shared mapping {fields[0]} private")
        if saved is not None:
            ctypes.memmove(lo, saved, hi - lo)
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        libc.mprotect(lo, hi - lo, prot)
    return len(shared)


def _on_child(_signum: int, _frame: Any) -> None:
    """SIGCHLD: nothing to do here; the signal's byte on the wake-up pipe wakes :meth:`_Server.poll`."""


class _Server:
    """Forks a worker per request; requests needing more than is imported yet wait in a queue."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.children: set[int] = set()
        self.sibling = 0  # the full zygote when forked from this one: neither a worker nor an orphan
        self.queue: list[tuple[dict[str, Any], list[int]]] = []
        self.stage = "torch"
        self.next_sweep = 0.0
        # SIGCHLD wakes poll(): a worker's exit is reported at once, not at the next poll timeout
        # (the grader waits for it when it closes a worker: ~25 ms per worker on average otherwise)
        self.wake_r, self.wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.signal(signal.SIGCHLD, _on_child)
        signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)

    def release(self) -> None:
        """In a child of this zygote: lets go of its socket, wake-up pipe and SIGCHLD handling."""
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        self.sock.close()
        for fd in (self.wake_r, self.wake_w):
            os.close(fd)

    def reap(self) -> None:
        exited = False
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid in self.children:
                self.children.discard(pid)
                self.sock.send(json.dumps({"event": "exit", "pid": pid, "status": status}).encode())
            exited = True
        if exited or time.monotonic() >= self.next_sweep:
            self.sweep()

    def sweep(self, everyone: bool = False) -> None:
        """Kills the orphans a worker left behind (the zygote is their subreaper): processes a student
        started and detached from the worker's process group must not outlive it. ``everyone``: the
        workers too (the zygote is about to exit)."""
        self.next_sweep = time.monotonic() + 1.0
        me = str(os.getpid())
        try:
            pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
        except OSError:
            return
        for pid in pids:
            if (pid in self.children and not everyone) or pid == self.sibling:
                continue
            try:
                with open(f"/proc/{pid}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[1].decode() == me:  # ppid: an orphan handed to us
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass

    def poll(self, timeout: float) -> bool:
        """Reaps children, then takes at most one request (waiting up to ``timeout`` s).

        Returns: whether a request was taken.
        """
        ready = select.select([self.sock, self.wake_r], [], [], timeout)[0]
        if self.wake_r in ready:
            with contextlib.suppress(BlockingIOError):
                while os.read(self.wake_r, 512):
                    pass
        self.reap()
        if self.sock not in ready:
            return False
        try:
            msg, fds, _flags, _addr = socket.recv_fds(self.sock, 1 << 20, 3)  # commands, results, stderr
        except OSError:
            msg, fds = b"", []
        if not msg:
            self.close()
        req = json.loads(msg)
        if self.stage == "all" or req["spec"].get("needs", "all") == self.stage:
            self.fork(req, list(fds))
        else:
            self.queue.append((req, list(fds)))
        return True

    def drain(self) -> None:
        """Forks the queued requests the current stage satisfies."""
        waiting, self.queue = self.queue, []
        for req, fds in waiting:
            if self.stage == "all" or req["spec"].get("needs", "all") == self.stage:
                self.fork(req, fds)
            else:
                self.queue.append((req, fds))

    def fork(self, req: dict[str, Any], fds: list[int]) -> None:
        from autograder.workers.worker import worker_main

        pid = os.fork()
        if pid == 0:  # the worker
            try:
                gc.enable()  # off in a zygote still importing (_settle)
                self.release()
                os.setsid()
                private_memory()  # nothing writable it shares with the zygote's other workers
                worker_main(fds[0], fds[1], req["spec"], err_fd=fds[2] if len(fds) > 2 else None)
            finally:
                os._exit(0)
        self.children.add(pid)
        for fd in fds:
            os.close(fd)
        self.sock.send(json.dumps({"event": "spawned", "id": req["id"], "pid": pid}).encode())

    def close(self) -> NoReturn:
        """The grader closed its end: kill what is left, stop."""
        for pid in self.children:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        self.sweep(everyone=True)
        os._exit(0)


def serve(server: _Server) -> None:
    """Serves fork requests until the grader closes its end."""
    server.drain()
    while True:
        server.poll(0.05)


def _subreaper() -> None:
    """Orphans of this process's workers come to it (see _Server.sweep); not inherited by a fork."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _fork_full(server: _Server, full_fd: int, extra: list[str]) -> None:
    """Forks the full zygote from this one (the JAX stack already imported) to serve ``full_fd``."""
    pid = os.fork()
    if pid == 0:
        try:
            server.release()
            _subreaper()
            _full(_Server(socket.socket(fileno=full_fd)), extra)
        finally:
            os._exit(0)
    os.close(full_fd)
    server.sibling = pid


def _full(server: _Server, extra: list[str]) -> NoReturn:
    """The full zygote: PyTorch (and Dynamo, warmed) first, then whatever of the JAX stack is missing."""
    inductor_dir = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    _preload(TORCH_STAGE)
    _warm_torch()
    _warm_dynamo()
    # torch._dynamo's import fixes its cache directory (and tempfile's) under /tmp; a sandboxed worker
    # may not write there: each worker finds its own from its TMPDIR
    tempfile.tempdir = None
    if inductor_dir is None:
        os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
    _worker_modules()
    server.sock.send(json.dumps({"event": "ready", "stage": "torch", "pid": os.getpid()}).encode())
    rest = [m for m in (*PRELOAD, *extra) if m not in TORCH_STAGE]
    # between two imports (never during one) fork the requests PyTorch alone satisfies
    def between() -> None:
        while server.poll(0.0):
            pass

    _preload(rest, between=between)
    _jaxtune_now()
    _settle()
    server.stage = "all"
    server.sock.send(json.dumps({"event": "ready", "stage": "all", "pid": os.getpid()}).encode())
    serve(server)
    raise AssertionError("serve returned")  # pragma: no cover - serve only ends by exiting


def main() -> None:
    """Entry point: ``python -m autograder.workers.zygote SOCKFD [--jax-only [--then-full FD]] [MODULE...]``."""
    args = sys.argv[2:]
    jax_only = args[:1] == ["--jax-only"]
    full_fd = int(args[2]) if jax_only and args[1:2] == ["--then-full"] else None
    extra = args[(3 if full_fd is not None else 1) if jax_only else 0:]
    _subreaper()
    from autograder.workers.environment import keep_to_planned_cpus

    keep_to_planned_cpus()  # before any thread exists: every worker inherits it
    gc.disable()  # until the imports are done: see _settle
    server = _Server(socket.socket(fileno=int(sys.argv[1])))
    if not jax_only:
        _full(server, extra)
    _preload([*JAX_ONLY, *extra])
    _worker_modules()
    if full_fd is not None:
        _fork_full(server, full_fd, extra)
    _settle()
    server.stage = "all"  # nothing more to import: any request is forked at once
    server.sock.send(json.dumps({"event": "ready", "stage": "all", "pid": os.getpid()}).encode())
    serve(server)


if __name__ == "__main__":
    main()
