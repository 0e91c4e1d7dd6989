"""Grader side: watching workers: time limits load cannot shorten, and each worker's stderr tail.

**Time.** A worker's load and each of its probe calls get a limit in *working seconds*: the CPU time
of everything the worker started, plus the time it spent asleep with nothing of it running or waiting for a CPU
(a ``time.sleep`` or a deadlock counts; waiting behind other processes, in a CPU quota's throttle or
for the grader to read its answer does not). On an idle machine that is the wall time of a
single-threaded worker; on a loaded one, or in a container with half a CPU, it is the same number,
so load cannot turn into a student's timeout. Measured from ``/proc`` and the cgroup (:class:`Sample`):

* **CPU**: the worker's own cgroup (``cpu_cgroup`` in its isolation record, made by the sandbox before any
  student code ran: v1 ``cpuacct.usage``, v2 ``cpu.stat``), which keeps the time of every thread and process
  it started, those that ended between two samples included; where the machine gives no cgroup, its process
  tree's (``/proc/PID/stat``: each living process's threads, ended ones included, and the children it reaped).
  ``Budget.accounting`` says which.
* **Asleep**, per interval: wall time less CPU less each living thread's run-queue delay (``schedstat``).
  A thread that lowered its own priority (``SCHED_IDLE``, a nice value above the grader's own, an autogroup
  whose nice value was raised) waits by its own choice: its delay is never excused, so a starved idle spinner
  cannot cancel a sleep beside it. A thread or process
  that ends takes its last interval's delay with it: that time then counts as asleep, never as less.

* **The grader's work for it**: while the worker waits for the grader (its frames unread, a request being
  served) its sleep is not its own, but the grader's CPU on what it sent before its answer is
  (:meth:`Budget.charge`): a worker cannot hand its time to the grader by flooding it with large frames.

A wall-clock cap of :data:`WALL_FACTOR` times the limit stays as a last resort (:func:`wall_cap`).

**Stderr.** Each worker writes its stderr into a pipe of its own; one daemon thread drains every pipe
and keeps the first :data:`HEAD_BYTES` and the last :data:`TAIL_BYTES` of each (what a worker prints is never shown to a student; a
dead worker's head and tail go to the instructor: ``grader_reason`` or ``instructor_log``).

One daemon thread does both (:class:`_Watcher`), sampling every :data:`SAMPLE_S` seconds.
"""

from __future__ import annotations

import fcntl
import os
import re
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
SCHED_IDLE = 5  # a thread's policy (``/proc/.../stat`` field 41) that runs only when nothing else wants the CPU
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_CGROUP = re.compile(r"/sys/fs/cgroup/(.*/)?tapetrace-\d+")  # only a cgroup the sandbox made


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


def _stat_fields(path: str) -> list[str]:
    """The fields of a ``/proc/.../stat`` file after the command's name (field 3, the state, first)."""
    with open(path, encoding="ascii", errors="replace") as fh:
        return fh.read().rpartition(")")[2].split()


def process_cpu(pid: int) -> float:
    """CPU seconds of a process: every thread it ran, the ended ones included, and every child it reaped
    (``/proc/PID/stat``'s utime, stime, cutime and cstime); 0 when it is gone."""
    try:
        fields = _stat_fields(f"/proc/{pid}/stat")
        return sum(int(x) for x in fields[11:15]) / _TICKS
    except (OSError, IndexError, ValueError):
        return 0.0


def own_priority() -> tuple[int, str]:
    """The grader's own priority, the base a worker's threads are compared with (:func:`waits`): its nice value
    and its autogroup (``/proc/self/autogroup``, ``""`` where there is none). Read in the grader's process,
    never from a worker: a worker that reniced itself whole (``os.nice(19)`` at import) would otherwise move
    the base with it and its starved threads' waits would be excused again."""
    return os.getpriority(os.PRIO_PROCESS, 0), autogroup("self")[0]


def autogroup(pid: int | str) -> tuple[str, int]:
    """A process's autogroup (``/proc/PID/autogroup``: the scheduler's group for its session, where
    ``CONFIG_SCHED_AUTOGROUP`` is on) and that group's nice value; ``("", 0)`` when unknown."""
    try:
        with open(f"/proc/{pid}/autogroup", encoding="ascii") as fh:
            name, _, nice = fh.read().split()[:3]
        return name, int(nice)
    except (OSError, ValueError):
        return "", 0


def waits(pid: int, base: tuple[int, str] | int) -> dict[int, tuple[int, bool]]:
    """Each living thread of a process: ``{tid: (nanoseconds waited for a CPU, lowered)}`` (``schedstat``; the
    run-queue delay includes a CPU quota's throttling). *Lowered*: the thread asked to wait, with
    ``SCHED_IDLE``, a nice value above the base's, or in an autogroup whose nice value was raised (a
    process that made a session of its own and wrote ``/proc/self/autogroup``: each of its threads keeps nice
    0 and ``SCHED_OTHER``, yet the group runs only when the machine has nothing else to do) unless that group
    is the base's own (see :func:`own_priority`; a bare int: a nice value, no autogroup). A lowered thread's
    wait is its own, see :class:`Budget`."""
    base_nice, base_group = (base, "") if isinstance(base, int) else base
    out: dict[int, tuple[int, bool]] = {}
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    group, group_nice = autogroup(pid)
    group_lowered = group_nice > 0 and group != base_group
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat", encoding="ascii") as fh:
                waited = int(fh.read().split()[1])
            fields = _stat_fields(f"/proc/{pid}/task/{t}/stat")
            lowered = group_lowered or int(fields[16]) > base_nice or int(fields[38]) == SCHED_IDLE
            out[int(t)] = (waited, lowered)
        except (OSError, IndexError, ValueError):
            continue
    return out


def cgroup_cpu(folder: str | None) -> float | None:
    """CPU seconds used so far by everything in a cgroup the sandbox made (exited threads and processes
    included): v1 ``cpuacct.usage``, v2 ``cpu.stat``'s ``usage_usec``; None when unreadable or not the
    sandbox's (``tapetrace-PID`` under ``/sys/fs/cgroup``)."""
    if not folder or not _CGROUP.fullmatch(folder):
        return None
    try:
        with open(os.path.join(folder, "cpuacct.usage"), encoding="ascii") as fh:
            return int(fh.read()) / 1e9
    except (OSError, ValueError):
        pass
    try:
        with open(os.path.join(folder, "cpu.stat"), encoding="ascii") as fh:
            for line in fh:
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) / 1e6
    except (OSError, ValueError):
        pass
    return None


class Sample:
    """One reading of a worker: when, its process tree's CPU seconds (living processes and what they reaped),
    its cgroup's (None: none), and each living thread's wait for a CPU (see :func:`waits`)."""

    def __init__(self, pid: int, base: tuple[int, str] | int = 0, cgroup: str | None = None) -> None:
        before = time.monotonic()
        self.cgroup = cgroup
        self.cgroup_cpu = cgroup_cpu(cgroup)
        self.cpu = 0.0
        self.waits: dict[tuple[int, int], tuple[int, bool]] = {}
        procs = tree(pid)
        for p in procs:
            self.cpu += process_cpu(p)
            self.waits.update(((p, tid), w) for tid, w in waits(p, base).items())
        self.at = (before + time.monotonic()) / 2  # the counters were read in between
        self.strays = strays(procs, self.cgroup if self.cgroup_cpu is not None else None)


def strays(procs: list[int], cgroup: str | None) -> set[int]:
    """The living processes of ``procs`` that are not in ``cgroup`` (the worker's own CPU cgroup, made by the
    sandbox: every process the worker starts is born in it). Where nothing keeps the worker from cgroupfs
    (root, no namespaces, no Landlock: ``minimal``), its code can write its pid into another cgroup's
    ``cgroup.procs`` and leave its CPU, memory and process caps behind; :class:`Budget` stops a worker seen
    doing so. Empty without a cgroup, or where its members cannot be read."""
    if not cgroup or not _CGROUP.fullmatch(cgroup):
        return set()
    try:
        with open(os.path.join(cgroup, "cgroup.procs"), encoding="ascii") as fh:
            members = {int(x) for x in fh.read().split()}
    except (OSError, ValueError):
        return set()
    out = set()
    for p in procs:
        if p in members:
            continue
        try:
            if _stat_fields(f"/proc/{p}/stat")[0] not in ("Z", "X"):  # (an exited one has left every cgroup)
                out.add(p)
        except (OSError, IndexError):
            continue
    return out


def interval(before: Sample, after: Sample, lowered: set[tuple[int, int]] | None = None) -> tuple[float, float]:
    """``(CPU seconds, seconds asleep)`` between two samples.

    CPU: the cgroup's where both samples read the same one (every thread and process the worker started,
    those that ended between the samples included), else the process tree's; the larger of the two. Asleep:
    wall time less CPU less the waits for a CPU of threads that did not lower their priority (``lowered``
    collects those that did: a thread once seen lowered stays so). It may come out a little below 0 (the
    counters are read one file after another) and does when threads ran in parallel. A thread that ended
    between the samples takes its last wait with it: that time then counts as asleep, never as less.
    """
    lowered = set() if lowered is None else lowered
    cpu = max(0.0, after.cpu - before.cpu)
    if after.cgroup == before.cgroup and after.cgroup_cpu is not None and before.cgroup_cpu is not None:
        cpu = max(cpu, after.cgroup_cpu - before.cgroup_cpu)
    excused = 0
    for key, (waited, low) in after.waits.items():
        was = before.waits.get(key)
        if low or (was is not None and was[1]):
            lowered.add(key)
        if key not in lowered:
            excused += max(0, waited - (was[0] if was is not None else 0))
    return cpu, after.at - before.at - cpu - excused / 1e9


def working(before: Sample, after: Sample) -> float:
    """Working seconds between two :class:`Sample` s: CPU used, plus time asleep (nothing running or waiting)."""
    cpu, asleep = interval(before, after)
    return cpu + max(0.0, asleep)


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
        cgroup: the worker's CPU-accounting cgroup once known (its isolation record's ``cpu_cgroup``, sent
            before any student code ran); None or returning None: its process tree is measured alone.

    ``accounting`` says how the last interval was measured: ``cgroup`` or ``process tree``.
    """

    def __init__(self, pid: int, limit: float, kill: Callable[[], None],
                 behind: Callable[[], bool] | None = None, cgroup: Callable[[], str | None] | None = None) -> None:
        self.pid = pid
        self.limit = float(limit)
        self.used = 0.0
        self._slack = 0.0
        self._charged = 0.0  # the grader's CPU on the worker's behalf (:meth:`charge`; written by its caller only)
        self._counted = 0.0  # how much of it :attr:`used` holds (written by :meth:`step` only)
        self.expired = False
        self.escaped = False  # a process of it was seen outside its cgroup (see :func:`strays`)
        self._kill = kill
        self._behind = behind
        self._cgroup = cgroup or (lambda: None)
        # the grader's own priority (a worker's thread below it chose to wait), never the worker's: that one it sets
        self._base = own_priority()
        self._lowered: set[tuple[int, int]] = set()
        self._last = Sample(pid, self._base, self._cgroup())
        self.accounting = "process tree"

    def step(self) -> None:
        """Adds the working time since the last step; kills the worker once the limit is reached."""
        now = Sample(self.pid, self._base, self._cgroup())
        grader_behind = bool(self._behind and self._behind())
        cpu, asleep = interval(self._last, now, self._lowered)
        self.accounting = "cgroup" if now.cgroup_cpu is not None and self._last.cgroup_cpu is not None \
            else "process tree"
        charged = self._charged
        self.used += cpu + charged - self._counted
        self._counted = charged
        if not grader_behind:  # (waiting for the grader is not the worker's time)
            # the reading's jitter cancels out over a few samples instead of adding up; the credit is
            # bounded, so threads running in parallel cannot buy a sleep later
            self._slack = max(-SLACK_S, self._slack + asleep)
            if self._slack > 0:
                self.used += self._slack
                self._slack = 0.0
        # a process outside the worker's cgroup at two looks in a row (one that was exiting is gone by then):
        # it left it, taking its time and its caps along; the worker is stopped as out of time
        self.escaped = self.escaped or bool(now.strays & self._last.strays)
        self._last = now
        self._expire_at(self.limit if self.escaped else self.used)

    def charge(self, seconds: float) -> None:
        """Adds CPU seconds the grader's own thread spent on what the worker sent before its answer (reading and
        parsing its frames, serving its requests for compiled programs): work a worker hands the grader is its
        own, so a flood of frames cannot keep the grader busy (and the worker "waiting for the grader", its
        sleep charged to no one) beyond the worker's own limit. Called from the thread that reads the worker."""
        self._charged += max(0.0, seconds)
        self._expire_at(self.used + self._charged - self._counted)

    def _expire_at(self, used: float) -> None:
        if used >= self.limit and not self.expired:
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
