"""Worker side: a warm fork server for workers (no student code runs in it; each worker it forks runs ``worker``).

Importing torch, jax, flax and optax costs ~4 s per process on CPU. The
zygote imports them once (single-threaded: BLAS pinned to one thread, no
backend initialised, no CUDA context), then forks one worker per request.
It imports in two stages: numpy + torch first ("ready", stage "torch"),
after which requests whose spec says ``needs: "torch"`` (the PyTorch-only
exercises) are forked between the following imports (never during one),
so they run on another core while the JAX stack loads; other requests wait
for stage "all". Each "ready" event names the modules the zygote meant to import by then
(``planned``) and those that failed (``failed``: module -> "Type: first line"), which a Dask
worker's admission reads instead of importing them all again (``_launch.ZygoteLauncher.imports``).
With ``--jax-only`` it imports the JAX stack only and forks at once; with
``--then-full FD`` as well, it then forks the full zygote from itself, which
goes on to import PyTorch and serves FD (``_launch.ZygotePair``): the
JAX-only exercises start while PyTorch is still importing, and the JAX stack
is imported once, not in both (~1 CPU-s per run).
With ``--needs`` (the run's plan: ``_warmup.planned``) it imports and warms only
what the run's exercises need; a worker needing more imports it after the fork.
Each child initialises its own backend after the fork, so nothing
fork-unsafe is shared. Requests arrive over a SOCK_SEQPACKET socket with the
worker's two pipe ends attached (SCM_RIGHTS); exits are reported back.
What it imports and warms, and when it freezes the collector, is ``warmup``'s; the modules every worker runs
it imports itself (:func:`worker_modules`).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import signal
import socket
import sys
import time
from typing import Any, NoReturn

from autograder.workers import warmup as _warmup

PROT_NONE, PROT_READ, PROT_WRITE, PROT_EXEC = 0, 1, 2, 4
MAP_PRIVATE, MAP_FIXED, MAP_ANONYMOUS = 0x02, 0x10, 0x20


def private_memory() -> int:
    """In a worker just forked: makes every shared mapping it inherited its own (returns how many).

    A shared mapping (``MAP_SHARED``: a semaphore in /dev/shm, a shared file or memory region that a
    library made while the zygote warmed up) stays shared across fork: what one worker writes there,
    every other worker forked from the same zygote sees, and a lock one takes and never releases
    blocks them all. Each one is replaced, at the same address, by private memory holding the same
    bytes with the same protection (Python objects pointing there keep working). Runs before any
    student code, single-threaded; the zygote itself holds no such lock (see ``_warmup._no_tqdm_monitor``).
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
                gc.enable()  # off in a zygote still importing (_warmup.settle)
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
        """The grader closed its end: kill what is left (the full zygote forked from this one too: it exits
        by itself when the grader closes its own end, unless it hangs in an import), stop."""
        for pid in self.children:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        if self.sibling:  # our child: its pid is not reused before we reap it
            with contextlib.suppress(OSError):
                os.kill(self.sibling, signal.SIGKILL)
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


def _fork_full(server: _Server, full_fd: int, extra: list[str], needs: frozenset[str]) -> None:
    """Forks the full zygote from this one (the JAX stack already imported) to serve ``full_fd``."""
    pid = os.fork()
    if pid == 0:
        try:
            server.release()
            _subreaper()
            _full(_Server(socket.socket(fileno=full_fd)), extra, needs)
        finally:
            os._exit(0)
    os.close(full_fd)
    server.sibling = pid


def worker_modules() -> None:
    """What every child runs: the worker, the sandbox every student's worker applies, the compile cache's
    borrower, the datasets, and (once JAX is imported) the JAX set-up of ``_jaxtune``; the probes' tools
    (their tally bound to the worker's result pipe, named in this process's environment), the guard and the
    seal, which every worker imports before its first probe (~15 ms each, after the fork). Here, not in
    ``warmup``: the worker imports that module (``warm_dynamo_once``)."""
    import autograder.probing.tools  # noqa: F401
    import autograder.workers.compile_cache  # noqa: F401
    import autograder.workers.guard  # noqa: F401
    import autograder.workers.seal  # noqa: F401
    import autograder.workers.worker  # noqa: F401
    from autograder.core import data as _data
    from autograder.sandbox import isolate as _sandbox
    from autograder.workers import jaxtune as _jaxtune

    _sandbox.preload()
    _jaxtune.reuse_mlir_contexts()
    with contextlib.suppress(OSError):  # a student's worker reads them before its sandbox (see _worker)
        _data.all_arrays()


def _full(server: _Server, extra: list[str], needs: frozenset[str]) -> NoReturn:
    """The full zygote: PyTorch (and Dynamo, warmed) first, then whatever of the JAX stack is missing; of
    these, only what ``needs`` names (the run's plan: ``_warmup.planned``)."""
    inductor_dir = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    plan = _warmup.planned(needs)
    first = [m for m in plan if m in _warmup.TORCH_STAGE]
    failed = _warmup.preload(first)
    if "torch" in needs:
        _warmup.warm_torch(optimizer="dynamo" in needs)
    if "compile" in needs:
        _warmup.warm_dynamo()
    # torch._dynamo's import fixes its cache directory (and tempfile's) under /tmp; a sandboxed worker
    # may not write there: each worker finds its own from its TMPDIR
    _warmup.forget_temp_dir(inductor_dir)
    worker_modules()
    server.sock.send(json.dumps({"event": "ready", "stage": "torch", "pid": os.getpid(),
                                 "planned": first, "failed": failed}).encode())
    rest = [m for m in (*plan, *extra) if m not in _warmup.TORCH_STAGE]
    # between two imports (never during one) fork the requests PyTorch alone satisfies
    def between() -> None:
        while server.poll(0.0):
            pass

    failed.update(_warmup.preload(rest, between=between))
    _warmup.jaxtune_now()
    _ready_for_all(server, [*first, *rest], failed)
    serve(server)
    raise AssertionError("serve returned")  # pragma: no cover - serve only ends by exiting


def _ready_for_all(server: _Server, planned: list[str], failed: dict[str, str]) -> None:
    """All imported: the collector's freeze, then every request is forked at once; the grader is told what
    this zygote holds (``imported``: the modules of ``_warmup.PRELOAD`` in it), what it meant to import
    (``planned``) and what failed (``failed``: module -> "Type: first line", read by a Dask worker's admission)."""
    _warmup.settle()
    server.stage = "all"
    server.sock.send(json.dumps({"event": "ready", "stage": "all", "pid": os.getpid(), "imported": _warmup.imported(),
                                 "planned": planned, "failed": failed}).encode())


def main() -> None:
    """Entry point: ``python -m autograder.workers.zygote SOCKFD [--needs LIST] [--jax-only [--then-full FD]]
    [MODULE...]``; ``--needs``: what the run's exercises need (``_warmup.parse_needs``; absent: everything)."""
    args = sys.argv[2:]
    needs = _warmup.ALL_NEEDS
    if args[:1] == ["--needs"]:
        needs, args = _warmup.parse_needs(args[1]), args[2:]
    jax_only = args[:1] == ["--jax-only"]
    full_fd = int(args[2]) if jax_only and args[1:2] == ["--then-full"] else None
    extra = args[(3 if full_fd is not None else 1) if jax_only else 0:]
    _subreaper()
    from autograder.workers.environment import keep_to_planned_cpus

    keep_to_planned_cpus()  # before any thread exists: every worker inherits it
    gc.disable()  # until the imports are done: see _warmup.settle
    server = _Server(socket.socket(fileno=int(sys.argv[1])))
    if not jax_only:
        _full(server, extra, needs)
    inductor_dir = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    planned = [*_warmup.JAX_ONLY, *extra]
    failed = _warmup.preload(planned)
    _warmup.forget_temp_dir(inductor_dir)
    worker_modules()
    if full_fd is not None:
        _fork_full(server, full_fd, extra, needs)
    _ready_for_all(server, planned, failed)  # nothing more to import: any request is forked at once
    serve(server)


if __name__ == "__main__":
    main()
