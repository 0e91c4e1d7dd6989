"""Grader side: the kernel's word, after every answer, that the worker's own loop waits for the next command.

Its worker half is in ``autograder.workers.worker``: the calibration reads and the loop of ``worker_main``.

A probe runs in the student's process, so no frame on the result pipe says who wrote it, and the fence
(``autograder.workers.handle``) proves only that *something* read the grader's next command. Code inside
a call can read the commands itself: answer a call with a forged frame, echo its fence and then serve
every later command from there, the real answer never written; or read them from another thread or a
child. What no code in the worker can change is where the kernel sees its threads wait:
``/proc/PID/task/TID/syscall`` holds, for a thread blocked in a system call, its number, its arguments
and its stack pointer.

So, before any student code runs, a student's worker reads its command pipe twice (``calibrate`` in its
spec, ``autograder.workers.worker``): once from its loop's own frame and once from one C-level call
deeper (the depth at which a probe runs the student's code); the grader notes both stack pointers. After
every answer's fence (and after the load's status), before it sends anything more, it wants to see:

- the worker's main thread blocked in ``readv`` on its command pipe (``wire.recv``'s call), its stack pointer no deeper than
  halfway between the two (a loop run from inside a call waits deeper: ``forged.nested``);
- no other thread of the worker's processes blocked reading that pipe, and no other descriptor of it than
  the loop's (``forged.reader``);
- the main thread to have read, since the last confirmation, at least every byte of the commands and fences
  the grader sent meanwhile (its ``rchar`` in ``/proc/PID/task/TID/io``): the loop waited in its read all
  along, so a command taken by anything else, however it read (a thread spinning on reads that never wait, a
  copy of the descriptor passed on and closed again), leaves it short (``forged.reader``). Nothing can make
  up the difference: the channels are socket pairs (``autograder.workers.handle``: no end can be opened
  again through /proc, the worker's end can put nothing back into its own way), and between two probes no
  student code runs on the loop's thread (``autograder.workers.worker``: signals blocked, Python's handlers
  deferred, the collector off).

The grader needs to read those files. With ``CAP_SYS_PTRACE`` (root outside a container) it reads any
worker's. Without it (Docker's default set: Gradescope, ``otter grade``) the kernel lets a process's own user
read them when the process is dumpable: a worker that dropped to a uid of its own stays dumpable
(``autograder.sandbox.isolate``: no other process has that uid, and seccomp refuses ``ptrace``), and the
grader reads as that user (:func:`as_owner`: ``setfsuid`` on the reading thread only). A process of the
worker's that hides itself again (made non-dumpable, or exec'ing a file it cannot read) counts as forged.
Where nothing can read them (no uid of its own and no ``CAP_SYS_PTRACE``), or the stack pointers do not
differ enough to tell the two depths apart, the record says so (``answers_confirmed``) and the fence alone
stands. Linux on x86_64 and aarch64 only.
"""

from __future__ import annotations

import contextlib
import os
import platform
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from autograder.sandbox.libc import c_library

# system calls by architecture: the loop's (``readv``: ``autograder.core.wire``), and every one that reads its channel
# (read, readv, preadv, preadv2, splice, tee; recvfrom, recvmsg, recvmmsg)
_READ = {"x86_64": 19, "amd64": 19, "aarch64": 65, "arm64": 65}
_READS = {"x86_64": frozenset({0, 19, 295, 327, 275, 276, 45, 47, 299}),
          "amd64": frozenset({0, 19, 295, 327, 275, 276, 45, 47, 299}),
          "aarch64": frozenset({63, 65, 69, 286, 76, 77, 207, 212, 243}),
          "arm64": frozenset({63, 65, 69, 286, 76, 77, 207, 212, 243})}
# the two calibration depths must differ by at least this many bytes of stack for the depth rule to hold
MIN_GAP = 64
# how long a calibration read may take to be seen (the worker reaches it at once: no student code before it)
CALIBRATION_SECONDS = 10.0


@dataclass(frozen=True)
class Blocked:
    """A thread blocked in a system call, as ``/proc/PID/task/TID/syscall`` shows it."""

    nr: int
    args: tuple[int, ...]
    sp: int


def _machine() -> str:
    return platform.machine().lower()


def state(pid: int, tid: int) -> Blocked | str | None:
    """Where thread ``tid`` of process ``pid`` is: :class:`Blocked`, ``"running"`` (or ``"other"``: blocked
    outside a system call), ``"hidden"`` when the kernel refuses to say (not permitted), or None when the
    file cannot be read otherwise (gone)."""
    try:  # bytes: a text file would look up its codec, an import, maybe while reading as the worker's user
        with open(f"/proc/{pid}/task/{tid}/syscall", "rb") as fh:
            words = fh.read().split()
    except PermissionError:
        return "hidden"
    except (OSError, ValueError):
        return None
    if not words:
        return None
    if words[0] == b"running":
        return "running"
    try:
        nr = int(words[0])
        if nr < 0 or len(words) < 9:
            return "other"
        return Blocked(nr, tuple(int(w, 16) for w in words[1:7]), int(words[7], 16))
    except ValueError:
        return None


@contextlib.contextmanager
def as_owner(pid: int) -> Iterator[None]:
    """Within: this thread reads ``/proc`` as the user that owns process ``pid`` (its filesystem uid and gid,
    ``setfsuid``/``setfsgid``: a per-thread attribute, so the grader's other threads keep theirs), where the
    grader is root and ``pid`` a dumpable process of another user (a worker with a uid of its own). Without
    ``CAP_SYS_PTRACE`` that is how the kernel lets the grader read the worker's threads; elsewhere nothing
    changes. Restored on the way out, whatever happens."""
    try:
        st = os.stat(f"/proc/{pid}")
    except OSError:
        st = None
    if st is None or os.geteuid() != 0 or st.st_uid == 0 or not hasattr(os, "setresuid"):
        yield
        return
    libc = c_library()
    gid = libc.setfsgid(st.st_gid)
    uid = libc.setfsuid(st.st_uid)
    try:
        yield
    finally:
        libc.setfsuid(uid)
        libc.setfsgid(gid)


def _link(pid: int, fd: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return None


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                out += [int(w) for w in fh.read().split()]
        except (OSError, ValueError):
            continue
    return out


def loop_process(pid: int, isolation: dict[str, Any] | None) -> int:
    """The process that runs the worker's loop: ``pid`` itself, or, in a PID namespace of its own, the one
    child ``pid`` forked into it (``autograder.sandbox.namespaces``; asked before any student code runs)."""
    if (isolation or {}).get("pid_namespace"):
        kids = _children(pid)
        if len(kids) == 1:
            return kids[0]
    return pid


@dataclass
class LoopWatch:
    """What calibration found of one worker's loop, and the check made after each answer."""

    pid: int
    cmd_fd: int = -1
    pipe: str | None = None
    loop_sp: int = 0
    nested_sp: int = 0
    rchar: int | None = None  # the main thread's bytes read at the last confirmation (see :meth:`confirm`)
    record: dict[str, Any] = field(default_factory=dict)

    @property
    def depth_rule(self) -> bool:
        return self.loop_sp - self.nested_sp >= MIN_GAP

    def _main(self, deadline: float, below: int | None = None) -> Blocked | None:
        """Waits until the main thread is blocked in the loop's ``readv`` on the command pipe (below stack pointer ``below``
        when given)."""
        pause = 0.0002
        read = _READ.get(_machine())
        while time.monotonic() < deadline:
            with as_owner(self.pid):
                st = state(self.pid, self.pid)
                pipe = isinstance(st, Blocked) and self._is_pipe(self.pid, st.args[0])
            if st is None or st == "hidden":
                return None
            if isinstance(st, Blocked) and st.nr == read and (below is None or st.sp < below) and pipe:
                return st
            time.sleep(pause)
            pause = min(pause * 2, 0.005)
        return None

    def confirm(self, deadline: float, owed: int = 0) -> str | None:
        """After an answer's fence: None when the loop waits for the next command as it should, else the
        ``forged.*`` catalogue key of what the kernel shows (``forged.running``: the main thread was never
        seen waiting for a command before ``deadline``, or the worker is gone).

        ``owed``: the bytes of commands and fences the grader sent since the last confirmation. The main thread
        must have read at least that many since then (its ``rchar``): the loop waited in its ``readv`` all
        along, so a command taken by anything else (a thread spinning on reads that never wait, a copy of
        the descriptor passed on and closed again) leaves it short (``forged.reader``)."""
        pause = 0.0002
        while time.monotonic() < deadline:
            with as_owner(self.pid):
                st = state(self.pid, self.pid)
                if st is None or st == "hidden":
                    return "forged.running"  # gone, or hidden from the grader since calibration
                if isinstance(st, Blocked) and st.nr in _READS.get(_machine(), ()) \
                        and self._is_pipe(self.pid, st.args[0]):
                    if st.nr != _READ.get(_machine()) or st.args[0] != self.cmd_fd:
                        return "forged.nested"  # the commands read another way than the loop reads them
                    if self.depth_rule and st.sp < (self.loop_sp + self.nested_sp) // 2:
                        return "forged.nested"
                    return self._other_readers() or self._read_all(owed)
            time.sleep(pause)
            pause = min(pause * 2, 0.005)
        return "forged.running"

    def _read_all(self, owed: int) -> str | None:
        """Whether the main thread read ``owed`` bytes or more since the last confirmation (from where it waits
        now, nothing else can have made it read: the loop's own read is where it waits)."""
        now = _rchar(self.pid, self.pid)
        before, self.rchar = self.rchar, now
        if owed and before is not None and now is not None and now - before < owed:
            return "forged.reader"
        return None

    def _is_pipe(self, pid: int, fd: int) -> bool:
        return self.pipe is not None and _link(pid, fd) == self.pipe

    def _other_readers(self) -> str | None:
        """Any other way to the command pipe in the worker or its descendants: a thread but the main one blocked
        reading it, or a descriptor of it but the loop's own (a copy made with ``dup`` or opened again through
        ``/proc/self/fd``: one read without blocking, spinning, would take commands before the loop wakes).
        A child forked by the student's code keeps the loop's descriptor, under its number (seccomp refuses
        replacing it): that one is the loop's. A process the grader may no longer look into (made
        non-dumpable, or running a file it cannot read) counts as a reader: it could be one."""
        reads = _READS.get(_machine(), frozenset())
        seen: set[int] = set()
        todo = [self.pid]
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            try:
                tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
            except (OSError, ValueError):
                continue
            for tid in tids:
                if pid == self.pid and tid == self.pid:
                    continue
                st = state(pid, tid)
                if st == "hidden" or isinstance(st, Blocked) and st.nr in reads and self._is_pipe(pid, st.args[0]):
                    return "forged.reader"
            try:
                fds = [int(f) for f in os.listdir(f"/proc/{pid}/fd")]
            except PermissionError:
                return "forged.reader"
            except (OSError, ValueError):
                fds = []
            if any(fd != self.cmd_fd and self._is_pipe(pid, fd) for fd in fds):
                return "forged.reader"
            todo += _children(pid)
        return None


def pipe_link(fd: int) -> str:
    """What ``/proc/PID/fd/N`` reads for the descriptor ``fd`` (either end of a pipe; this end of a socket pair)."""
    st = os.fstat(fd)
    return f"{'socket' if stat.S_ISSOCK(st.st_mode) else 'pipe'}:[{st.st_ino}]"


def _rchar(pid: int, tid: int) -> int | None:
    """The bytes thread ``tid`` has read so far (``rchar`` of ``/proc/PID/task/TID/io``), or None."""
    try:
        with open(f"/proc/{pid}/task/{tid}/io", "rb") as fh:
            for line in fh:
                if line.startswith(b"rchar:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def calibrate(pid: int, isolation: dict[str, Any] | None, pipe: str, release: Any,
              deadline: float) -> LoopWatch | None:
    """Reads where the worker's loop waits for its commands, and one C-level call deeper.

    The worker (``autograder.workers.worker``, spec ``calibrate``) reads two frames before any student code
    runs; ``release()`` writes one. It is called twice whatever is seen, so the worker always goes on.

    Args:
        pid: the worker's process as the grader started it (its loop's, or its PID namespace's parent).
        isolation: the sandbox's record (``answers_confirmed`` is added to it).
        pipe: :func:`pipe_link` of the command pipe.
        release: writes one frame on the command pipe.
        deadline: ``time.monotonic()`` by which each read must be seen.

    Returns:
        The watch, or None where the grader cannot read the worker's threads (the reason is then in
        ``isolation["answers_confirmed"]``, when ``isolation`` is given).
    """
    note = isolation if isolation is not None else {}
    if _machine() not in _READ or not os.path.isdir("/proc"):
        release(), release()
        note["answers_confirmed"] = "fence only: no /proc/PID/syscall on this system"
        return None
    watch = LoopWatch(loop_process(pid, isolation), pipe=pipe)
    first = watch._main(deadline)
    if first is not None:
        watch.cmd_fd, watch.loop_sp = first.args[0], first.sp
    release()
    second = watch._main(deadline, below=watch.loop_sp) if first is not None else None
    release()
    if first is None or second is None or second.args[0] != watch.cmd_fd:
        with as_owner(watch.pid):
            why = "not permitted" if state(watch.pid, watch.pid) in (None, "hidden") else "not seen"
        note["answers_confirmed"] = f"fence only: the worker's threads cannot be read ({why})"
        return None
    watch.nested_sp = second.sp
    with as_owner(watch.pid):
        counted = _rchar(watch.pid, watch.pid) is not None
    note["answers_confirmed"] = ("stack" if watch.depth_rule else "threads") + (
        "" if counted else ", bytes not counted (no /proc/PID/task/TID/io: task I/O accounting)")
    return watch
