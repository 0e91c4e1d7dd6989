"""Cgroups of its own for a student's worker: a fork bomb stops at :func:`pids_cap` processes, and the CPU
time of everything it starts is counted.

Owns finding this process's cgroup folders where a pids controller can be set (cgroup v1's pids
hierarchy, or v2's where pids is enabled for children) and moving the worker into a capped child cgroup
(:func:`_pids_cgroup`), and one that counts CPU time (:func:`_cpu_cgroup`: v2's ``cpu.stat``, which every
cgroup has, or v1's cpuacct hierarchy), where the machine lets root write cgroupfs. The grader's time
limits read the latter (``autograder.workers.watch``). :mod:`autograder.sandbox.quota` releases both when
the worker closes.
"""

from __future__ import annotations

import os
from pathlib import Path


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
    except FileExistsError:
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
