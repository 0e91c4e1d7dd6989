"""Watching workers from the grader's side: time limits load cannot shorten, and each worker's stderr tail.

**Time.** A worker's load and each of its probe calls get a limit in *working seconds*: the CPU time
its process tree used, plus the time it spent asleep with nothing of it running or waiting for a CPU
(a ``time.sleep`` or a deadlock counts; waiting behind other processes, in a CPU quota's throttle or
for the grader to read its answer does not). On an idle machine that is the wall time of a
single-threaded worker; on a loaded one, or in a container with half a CPU, it is the same number,
so load cannot turn into a student's timeout. Measured from ``/proc``: each living thread's ``schedstat``
(CPU time and run-queue delay, in nanoseconds); an interval is asleep by ``wall - cpu - run-queue
delay`` (never below 0). A thread or child process that ends takes its last interval's counts with it:
that time then counts as asleep (the worker waited for it), never as less than it was. A wall-clock cap of
:data:`WALL_FACTOR` times the limit stays as a last resort (:func:`wall_cap`).

**Stderr.** Each worker writes its stderr into a pipe of its own; one daemon thread drains every pipe
and keeps the first :data:`HEAD_BYTES` and the last :data:`TAIL_BYTES` of each (what a worker prints is never shown to a student; a
dead worker's head and tail go to the instructor: ``grader_reason`` or ``instructor_log``).

One daemon thread does both (:class:`_Watcher`), sampling every :data:`SAMPLE_S` seconds.
"""

from __future__ import annotations

import fcntl
import os
import select
import struct
import termios
import threading
import time
from collections.abc import Callable

HEAD_BYTES = 2048
TAIL_BYTES = 4096
SAMPLE_S = 0.25
WALL_FACTOR = 10.0
SLACK_S = 0.5


def wall_cap(limit: float) -> float:
    """The wall-clock seconds after which a call ends whatever its working time (a last resort)."""
    return limit * WALL_FACTOR


def tree(pid: int) -> list[int]:
    """``pid`` and its living descendants (``/proc/PID/task/TID/children``)."""
    out, i = [pid], 0
    while i < len(out):
        p = out[i]
        i += 1
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                with open(f"/proc/{p}/task/{t}/children", encoding="ascii") as fh:
                    out.extend(int(x) for x in fh.read().split() if int(x) not in out)
            except (OSError, ValueError):
                continue
    return out


def _times(pid: int) -> tuple[float, float]:
    """``(CPU seconds, seconds waited for a CPU)`` of a process's living threads (``schedstat``: nanosecond
    counts; the run-queue delay includes a CPU quota's throttling)."""
    ran = waited = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0.0, 0.0
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat", encoding="ascii") as fh:
                fields = fh.read().split()
            ran += int(fields[0])
            waited += int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    return ran / 1e9, waited / 1e9


def sample(pid: int) -> tuple[float, float, float]:
    """``(monotonic time, CPU seconds, run-queue delay seconds)`` of ``pid``'s process tree (living threads)."""
    before = time.monotonic()
    ran = waited = 0.0
    for p in tree(pid):
        r, w = _times(p)
        ran += r
        waited += w
    return (before + time.monotonic()) / 2, ran, waited  # the counters were read in between


def working(before: tuple[float, float, float], after: tuple[float, float, float]) -> float:
    """Working seconds between two :func:`sample` s: CPU used, plus time asleep (nothing running or waiting)."""
    cpu, asleep = split(before, after)
    return cpu + max(0.0, asleep)


def split(before: tuple[float, float, float], after: tuple[float, float, float]) -> tuple[float, float]:
    """``(CPU seconds, seconds asleep)`` between two samples; asleep may come out a little below 0 (the
    counters are read one file after another) and does when threads ran in parallel."""
    wall, cpu, delay = (a - b for a, b in zip(after, before, strict=True))
    cpu = max(0.0, cpu)
    return cpu, wall - cpu - max(0.0, delay)


def pending(fd: int) -> int:
    """Bytes waiting unread in a pipe (FIONREAD), 0 when unknown."""
    try:
        return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
    except OSError:
        return 0


class Budget:
    """The working-time limit of one load or call of a worker (see the module's docstring).

    Args:
        pid: the worker's process (its tree is measured).
        limit: working seconds allowed.
        kill: called once, from the watcher's thread, when the limit is reached.
        behind: whether the worker now waits for the grader (its answer unread, or the grader working out
            one for it): that time is not the worker's, only its CPU counts then.
    """

    def __init__(self, pid: int, limit: float, kill: Callable[[], None],
                 behind: Callable[[], bool] | None = None) -> None:
        self.pid = pid
        self.limit = float(limit)
        self.used = 0.0
        self._slack = 0.0
        self.expired = False
        self._kill = kill
        self._behind = behind
        self._last = sample(pid)

    def step(self) -> None:
        """Adds the working time since the last step; kills the worker once the limit is reached."""
        now = sample(self.pid)
        grader_behind = bool(self._behind and self._behind())
        cpu, asleep = split(self._last, now)
        self.used += cpu
        if not grader_behind:  # (waiting for the grader is not the worker's time)
            # the reading's jitter cancels out over a few samples instead of adding up; the credit is
            # bounded, so threads running in parallel cannot buy a sleep later
            self._slack = max(-SLACK_S, self._slack + asleep)
            if self._slack > 0:
                self.used += self._slack
                self._slack = 0.0
        self._last = now
        if self.used >= self.limit and not self.expired:
            self.expired = True
            self._kill()


class StderrTail:
    """The grader's end of one worker's stderr pipe; keeps its first :data:`HEAD_BYTES` and last
    :data:`TAIL_BYTES` bytes.

    ``write_fd`` goes to the worker (then close it here with :meth:`close_writer`).
    """

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe2(os.O_CLOEXEC)
        os.set_blocking(self.read_fd, False)
        self._head = bytearray()  # the first bytes (often the first error) and the last ones
        self._buf = bytearray()
        self._seen = 0
        self._lock = threading.Lock()
        self._open = True
        _watcher().add_tail(self)

    def close_writer(self) -> None:
        """Closes the write end here (the worker holds its own copy)."""
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1

    def _drain(self) -> bool:
        """Reads what is there; False at end of file (every writer is gone) or once closed."""
        with self._lock:
            while self._open:
                try:
                    chunk = os.read(self.read_fd, 65536)
                except BlockingIOError:
                    return True
                except OSError:
                    return False
                if not chunk:
                    return False
                room = HEAD_BYTES - len(self._head)
                if room > 0:
                    self._head += chunk[:room]
                    chunk = chunk[room:]
                self._seen += len(chunk)
                self._buf += chunk
                if len(self._buf) > 2 * TAIL_BYTES:
                    del self._buf[:-TAIL_BYTES]
            return False

    def text(self, settle: float = 0.2) -> str:
        """The tail so far (waiting up to ``settle`` s for the last bytes of a worker that just died)."""
        deadline = time.monotonic() + settle
        while self._open and time.monotonic() < deadline:
            if not self._drain():
                break
            if not select.select([self.read_fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                break
        with self._lock:
            head, tail = bytes(self._head), bytes(self._buf[-TAIL_BYTES:])
            cut = self._seen > len(tail)
        return (head + (b"\n[...]\n" if cut else b"") + tail).decode("utf-8", errors="replace")

    def close(self) -> None:
        """Stops watching and releases the pipe (idempotent; the tail stays readable)."""
        self.close_writer()
        _watcher().remove_tail(self)
        with self._lock:
            if self._open:
                self._open = False
                os.close(self.read_fd)


class _Watcher:
    """The one daemon thread: drains the stderr pipes, steps the budgets."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tails: dict[int, StderrTail] = {}
        self._budgets: set[Budget] = set()
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()

    def _ensure(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name="tapetrace-watch", daemon=True)
            self._thread.start()

    def add_tail(self, tail: StderrTail) -> None:
        with self._lock:
            self._tails[tail.read_fd] = tail
            self._ensure()

    def remove_tail(self, tail: StderrTail) -> None:
        with self._lock:
            if self._tails.get(tail.read_fd) is tail:
                del self._tails[tail.read_fd]

    def add_budget(self, budget: Budget) -> None:
        with self._lock:
            self._budgets.add(budget)
            self._ensure()

    def remove_budget(self, budget: Budget) -> None:
        with self._lock:
            self._budgets.discard(budget)

    def _loop(self) -> None:
        next_step = time.monotonic() + SAMPLE_S
        while True:
            with self._lock:
                tails = dict(self._tails)
            poller = select.poll()
            for fd in tails:
                poller.register(fd, select.POLLIN)
            wait = max(0.0, next_step - time.monotonic())
            try:
                ready = poller.poll(wait * 1000) if tails else (time.sleep(wait) or [])
            except OSError:
                ready = []
            for fd, _ev in ready:
                with self._lock:  # the fd may have been closed and reused meanwhile: ask the map again
                    tail = self._tails.get(fd)
                    if tail is not None and not tail._drain():
                        del self._tails[fd]
            if time.monotonic() >= next_step:
                with self._lock:
                    budgets = list(self._budgets)
                for b in budgets:
                    try:
                        b.step()
                    except Exception:  # noqa: BLE001 - a vanished process: its caller sees the death
                        pass
                next_step = time.monotonic() + SAMPLE_S


_WATCHER: _Watcher | None = None
_WATCHER_LOCK = threading.Lock()


def _watcher() -> _Watcher:
    global _WATCHER
    with _WATCHER_LOCK:
        if _WATCHER is None or _WATCHER._pid != os.getpid():  # a forked child gets its own
            _WATCHER = _Watcher()
        return _WATCHER


class watching:
    """``with watching(budget):`` the budget is stepped by the watcher's thread meanwhile."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget

    def __enter__(self) -> Budget:
        _watcher().add_budget(self.budget)
        return self.budget

    def __exit__(self, *exc: object) -> None:
        _watcher().remove_budget(self.budget)
