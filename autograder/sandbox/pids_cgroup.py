"""Cgroups of its own for a student's worker: a fork bomb stops at :func:`pids_cap` processes, the CPU
time of everything it starts is counted, and the memory of everything it starts is capped.

Owns finding this process's cgroup folders where a pids controller can be set (cgroup v1's pids
hierarchy, or v2's where pids is enabled for children) and moving the worker into a capped child cgroup
(:func:`_pids_cgroup`), and one that counts CPU time (:func:`_cpu_cgroup`: v2's ``cpu.stat``, which every
cgroup has, or v1's cpuacct hierarchy), where the machine lets root write cgroupfs. The grader's time
limits read the latter (``autograder.workers.watch``). A memory cgroup (:func:`_memory_cgroup`: v2's
``memory.max``, or v1's memory hierarchy) caps its processes together, its tmpfs and ``/dev/shm`` included;
the grader reads its counters (:func:`memory_events`) when the worker dies by SIGKILL, to tell a kill at
the worker's own cap (the student's) from the container's OOM killer (the grader's).
:mod:`autograder.sandbox.quota` releases them all when the worker closes.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_NEAR = 2**20  # a v1 cgroup's peak this close to its cap: it reached it (charges come in pages)
# only a cgroup the sandbox made is read or removed by the grader
OWN_CGROUP = re.compile(r"/sys/fs/cgroup/.*/tapetrace-\d+|/sys/fs/cgroup/tapetrace-\d+")


def pids_cap() -> int:
    """The most processes and threads one worker may have (its own, XLA's and torch's threads included)."""
    return max(1024, 16 * (os.cpu_count() or 1))


def _mounts() -> dict[str, str]:
    """Where cgroupfs is mounted: ``v1-CONTROLLER`` (each v1 hierarchy's controllers) and ``v2``."""
    mounts: dict[str, str] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return mounts
    for line in lines:
        left, _, right = line.partition(" - ")
        fstype, _src, opts = (right.split() + ["", "", ""])[:3]
        mp = left.split()[4].replace("\\040", " ")
        if fstype == "cgroup":
            for controller in opts.split(","):
                mounts.setdefault(f"v1-{controller}", mp)
        elif fstype == "cgroup2":
            mounts.setdefault("v2", mp)
    return mounts


def _own(controller: str) -> str | None:
    """This process's folder in the hierarchy that holds ``controller`` (``v2``: the unified one); None: none."""
    mounts = _mounts()
    try:
        own = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in own:
        hid, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if controller == "v2" and hid == "0" and "v2" in mounts:
            return os.path.join(mounts["v2"], path.lstrip("/"))
        if controller != "v2" and f"v1-{controller}" in mounts and controller in controllers.split(","):
            return os.path.join(mounts[f"v1-{controller}"], path.lstrip("/"))
    return None


def _enter(parent: str, limits: dict[str, str]) -> str | None:
    """Makes ``parent/tapetrace-PID``, writes ``limits`` into it and moves this process in; its path, or None
    (the folder removed again) where the machine refuses."""
    folder = os.path.join(parent, f"tapetrace-{os.getpid()}")
    try:
        os.mkdir(folder)
    except FileExistsError:  # left by an earlier process of this pid: made again, so its counters start at 0
        try:
            os.rmdir(folder)
            os.mkdir(folder)
        except OSError:
            pass
    except OSError:
        return None
    try:
        for name, value in limits.items():
            Path(folder, name).write_text(value)
        Path(folder, "cgroup.procs").write_text("0")
    except OSError:
        try:
            os.rmdir(folder)
        except OSError:
            pass
        return None
    return folder


def _cpu_cgroup(got: dict[str, object]) -> None:
    """Puts this process (and so all it will start) in a cgroup that counts its CPU time, recorded as
    ``cpu_cgroup``; ``cpu_accounting`` says ``cgroup`` or, where the machine refuses, ``process tree`` (the
    grader then measures the living processes and what they reaped). The pids cgroup serves where it is a v2
    one (every v2 cgroup has ``cpu.stat``); else v1's cpuacct hierarchy, else the unified one beside v1."""
    pids = str(got.get("pids_cgroup") or "")
    if pids and os.path.exists(os.path.join(pids, "cpu.stat")):
        got["cpu_cgroup"] = pids
    else:
        for controller in ("cpuacct", "v2"):
            parent = _own(controller)
            folder = _enter(parent, {}) if parent else None
            if folder:
                got["cpu_cgroup"] = folder
                break
    got["cpu_accounting"] = "cgroup" if got.get("cpu_cgroup") else "process tree"


def _cgroup_dirs() -> list[str]:
    """This process's own cgroup folders where a pids controller can be set: cgroup v1's pids hierarchy,
    or v2's where pids is enabled for children (``cgroup.subtree_control``)."""
    out = [v1] if (v1 := _own("pids")) else []
    v2 = _own("v2")
    try:
        if v2 and "pids" in Path(v2, "cgroup.subtree_control").read_text().split():
            out.append(v2)
    except OSError:
        pass
    return out


def _pids_cgroup(got: dict[str, object]) -> None:
    """Moves this process into a cgroup of its own capped at :func:`pids_cap` processes (a fork bomb stops
    there, as root too: the kernel applies no RLIMIT_NPROC to root). Where the machine allows it: root
    with cgroupfs writable (a grading box; not Docker's default, where the uid's limit does it)."""
    cap = pids_cap()
    for parent in _cgroup_dirs():
        folder = _enter(parent, {"pids.max": str(cap)})
        if folder:
            got["pids_cap"] = cap
            got["pids_cgroup"] = folder
            return


def _memory_cgroup(got: dict[str, object], cap: int) -> None:
    """Caps the memory of everything this process starts (its children, what it writes to its tmpfs or
    ``/dev/shm``) at ``cap`` bytes together, in a cgroup of its own recorded as ``memory_cgroup``: an
    address-space cap (``RLIMIT_AS``) binds each process alone. ``memory_accounting`` says ``cgroup``, or
    ``process`` where the machine refuses (then an OOM kill is never judged the grader's: see
    ``autograder.workers.envelope.judge_kill``). A v2 pids or CPU cgroup with a memory controller serves
    (``memory.max``, no swap); else v1's memory hierarchy (``memory.limit_in_bytes``, and the same for
    memory and swap together where swap is accounted)."""
    got["memory_accounting"] = "process"
    for key in ("pids_cgroup", "cpu_cgroup"):
        folder = str(got.get(key) or "")
        if folder and os.path.exists(os.path.join(folder, "memory.max")):
            try:
                Path(folder, "memory.max").write_text(str(cap))
            except OSError:
                continue
            _try_write(folder, "memory.swap.max", "0")  # a swapping tree would crawl instead of stopping
            got["memory_cgroup"] = folder
            got["memory_accounting"] = "cgroup"
            return
    parent = _own("memory")
    folder = _enter(parent, {"memory.limit_in_bytes": str(cap)}) if parent else None
    if folder:
        _try_write(folder, "memory.memsw.limit_in_bytes", str(cap))
        got["memory_cgroup"] = folder
        got["memory_accounting"] = "cgroup"


def _try_write(folder: str, name: str, value: str) -> None:
    """Writes a cgroup file where it exists and the machine lets it."""
    try:
        Path(folder, name).write_text(value)
    except OSError:
        pass


def _keyed(text: str, key: str) -> int | None:
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key and parts[1].isdigit():
            return int(parts[1])
    return None


def memory_events(folder: str | None) -> dict[str, int] | None:
    """What a worker's own memory cgroup (its ``memory_cgroup``) recorded, read by the grader:
    ``oom_kill`` (processes in it the kernel's OOM killer killed, whichever limit ran out: the kernel counts
    a kill in the victim's cgroup) and ``at_cap`` (times its usage reached its own cap: v2's ``memory.events``
    ``max`` and ``oom``; v1's ``memory.failcnt``, plus one where its peak ``memory.max_usage_in_bytes``
    reached its cap). None where it cannot be read, or for a folder the sandbox did not make
    (``tapetrace-PID`` under ``/sys/fs/cgroup``)."""
    folder = str(folder or "")
    if not OWN_CGROUP.fullmatch(folder):
        return None
    try:
        events = Path(folder, "memory.events").read_text()
    except OSError:
        events = None
    if events is not None:
        kills, top, oom = _keyed(events, "oom_kill"), _keyed(events, "max"), _keyed(events, "oom")
        if kills is None or top is None or oom is None:
            return None
        return {"oom_kill": kills, "at_cap": top + oom}
    try:
        kills = _keyed(Path(folder, "memory.oom_control").read_text(), "oom_kill")
        failcnt = int(Path(folder, "memory.failcnt").read_text())
        peak, cap = (int(Path(folder, n).read_text()) for n in ("memory.max_usage_in_bytes", "memory.limit_in_bytes"))
    except (OSError, ValueError):
        return None
    if kills is None:
        return None
    # the most it ever held, at its cap: where memory and swap are capped together (memsw) that cap is met
    # first and some kernels count no failure for it
    return {"oom_kill": kills, "at_cap": failcnt + (peak >= cap - _NEAR)}
