"""What a student's worker may leave on the grading machine's disk: bytes and files, at every isolation level.

With namespaces a worker writes only into its private ``/tmp`` and ``/dev/shm``: size-capped tmpfs
(:data:`SCRATCH_BYTES`, :data:`SCRATCH_FILES` inodes), gone with the worker. Without them (a container
with Docker's default privileges) its scratch is a folder on the machine's own disk, where the kernel
caps each file (``RLIMIT_FSIZE``) but not their number or sum. There :class:`ScratchWatch`, a thread of
the grader, measures every live worker's scratch (and, for an unprivileged uid without Landlock, what
that uid owns in the world-writable folders) several times a second and kills a worker over either
cap: its exercise or test scores 0 with ``SCRATCH_FULL``. A worker's scratch is deleted when it closes.

What a watch cannot promise: between two looks a worker may write what the disk takes in
:data:`PERIOD` seconds (at most :data:`FILE_BYTES` per file).

Processes: the sandbox puts each worker in a pids cgroup of its own (and one that counts its CPU time, and one
that caps its memory) where the machine lets root write cgroupfs (``autograder.sandbox.pids_cgroup``), and an
unprivileged uid has its own ``RLIMIT_NPROC``; :func:`release_cgroup` empties and removes a closed worker's cgroups.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import threading
import time
from pathlib import Path
from typing import Any

from autograder.sandbox.pids_cgroup import OWN_CGROUP

SCRATCH_BYTES = 256 * 1024**2  # a worker's files, in all
SCRATCH_FILES = 10_000  # files and folders
FILE_BYTES = 64 * 1024**2  # one file (RLIMIT_FSIZE)
PERIOD = 0.1  # seconds between two looks
WORLD_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm")


def describe() -> dict[str, Any]:
    """The caps as a message's fields (``SCRATCH_FULL``)."""
    return {"cap": f"{SCRATCH_BYTES // 1024**2} MB", "files": SCRATCH_FILES}


def usage(paths: list[str], limit_files: int = SCRATCH_FILES + 1) -> tuple[int, int]:
    """(bytes on disk, entries) of the trees at ``paths``, never following links; stops counting at
    ``limit_files`` entries (a tree of a million files costs one look, not a million)."""
    used = files = 0
    stack = list(paths)
    while stack and files < limit_files:
        top = stack.pop()
        try:
            st = os.lstat(top)
        except OSError:
            continue
        files += 1
        used += st.st_blocks * 512
        if stat.S_ISDIR(st.st_mode):
            try:
                with os.scandir(top) as it:
                    stack += [e.path for e in it]
            except OSError:
                continue
    return used, files


def owned_by(uid: int, folders: tuple[str, ...] = WORLD_WRITABLE) -> list[str]:
    """The entries of ``folders`` (top level) that ``uid`` owns."""
    out = []
    for folder in folders:
        try:
            with os.scandir(folder) as it:
                out += [e.path for e in it if e.stat(follow_symlinks=False).st_uid == uid]
        except OSError:
            continue
    return out


class ScratchWatch:
    """Watches the live student workers' scratch folders; kills a worker over the caps.

    A worker is added when it starts (:meth:`add`) and removed when it closes (:meth:`remove`, which
    deletes its scratch). The thread runs while at least one worker is watched.
    """

    def __init__(self, period: float = PERIOD) -> None:
        self.period = period
        self._workers: dict[int, Any] = {}
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._stopped = False

    def add(self, worker: Any) -> None:
        """Watches ``worker`` (its ``scratch`` folder; its ``isolation`` record's ``uid``, read at each look)."""
        with self._lock:
            self._workers[id(worker)] = worker
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="tapetrace-scratch-watch", daemon=True)
                self._thread.start()
            self._wake.notify()

    def remove(self, worker: Any) -> None:
        """Stops watching ``worker`` and deletes what it left (its scratch; its uid's files in /tmp...)."""
        with self._lock:
            self._workers.pop(id(worker), None)
        for path in _paths_of(worker, include_scratch=False):
            _remove(path)
        scratch = getattr(worker, "scratch", None)
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._lock:
                if self._stopped:
                    return
                if not self._workers:
                    self._wake.wait(1.0)
                    if not self._workers:
                        self._thread = None
                        return
                workers = list(self._workers.values())
            for w in workers:
                self.check(w)
            with self._lock:
                if self._stopped:
                    return
                self._wake.wait(self.period)

    def check(self, worker: Any) -> bool:
        """Measures one worker now; kills it when over a cap. Returns whether it was killed."""
        used, files = usage(_paths_of(worker))
        if used <= SCRATCH_BYTES and files <= SCRATCH_FILES:
            return False
        worker.limit_hit = "SCRATCH_FULL"
        proc = getattr(worker, "proc", None)
        if proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                proc.kill()
        return True


def _paths_of(worker: Any, include_scratch: bool = True) -> list[str]:
    paths = [worker.scratch] if include_scratch and getattr(worker, "scratch", None) else []
    iso = getattr(worker, "isolation", None) or {}
    if iso.get("uid") is not None and not iso.get("landlock"):  # an unprivileged uid may write in /tmp...
        paths += owned_by(int(iso["uid"]))
    return paths


def _remove(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    except OSError:
        pass


def release_cgroup(isolation: dict[str, Any] | None) -> None:
    """Kills what is left in a closed worker's cgroups (its isolation record's ``pids_cgroup``,
    ``cpu_cgroup`` and ``memory_cgroup``, set by the sandbox before any student code ran) and removes them."""
    for key in ("pids_cgroup", "cpu_cgroup", "memory_cgroup"):
        folder = str((isolation or {}).get(key) or "")
        if OWN_CGROUP.fullmatch(folder):
            _empty_and_remove(folder)  # only a cgroup the sandbox made


def _empty_and_remove(folder: str) -> None:
    """Kills every process in a cgroup and removes it (gone already: nothing to do). v2's ``cgroup.kill``
    kills them all at once (none can fork meanwhile); else each pid in ``cgroup.procs``, again until none is
    left."""
    try:
        Path(folder, "cgroup.kill").write_text("1")
    except OSError:
        pass
    for _ in range(40):
        try:
            pids = [int(p) for p in Path(folder, "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)
    try:
        os.rmdir(folder)
    except OSError:
        pass
