"""A pids cgroup of its own for a student's worker: a fork bomb stops at :func:`pids_cap` processes.

Owns finding this process's cgroup folders where a pids controller can be set (cgroup v1's pids
hierarchy, or v2's where pids is enabled for children) and moving the worker into a capped child cgroup
(:func:`_pids_cgroup`), where the machine lets root write cgroupfs. :mod:`autograder.sandbox.quota`
releases it when the worker closes.
"""

from __future__ import annotations

import os
from pathlib import Path


def pids_cap() -> int:
    """The most processes and threads one worker may have (its own, XLA's and torch's threads included)."""
    return max(1024, 16 * (os.cpu_count() or 1))


def _cgroup_dirs() -> list[str]:
    """This process's own cgroup folders where a pids controller can be set: cgroup v1's pids hierarchy,
    or v2's where pids is enabled for children (``cgroup.subtree_control``)."""
    mounts: dict[str, str] = {}
    try:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fstype, _src, opts = (right.split() + ["", "", ""])[:3]
            mp = left.split()[4].replace("\\040", " ")
            if fstype == "cgroup" and "pids" in opts.split(","):
                mounts.setdefault("v1", mp)
            elif fstype == "cgroup2":
                mounts.setdefault("v2", mp)
        own = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in own:
        hid, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if "v1" in mounts and "pids" in controllers.split(","):
            out.append(os.path.join(mounts["v1"], path.lstrip("/")))
        elif "v2" in mounts and hid == "0":
            folder = os.path.join(mounts["v2"], path.lstrip("/"))
            try:
                if "pids" in Path(folder, "cgroup.subtree_control").read_text().split():
                    out.append(folder)
            except OSError:
                continue
    return out


def _pids_cgroup(got: dict[str, object]) -> None:
    """Moves this process into a cgroup of its own capped at :func:`pids_cap` processes (a fork bomb stops
    there, as root too: the kernel applies no RLIMIT_NPROC to root). Where the machine allows it: root
    with cgroupfs writable (a grading box; not Docker's default, where the uid's limit does it)."""
    cap = pids_cap()
    for parent in _cgroup_dirs():
        folder = os.path.join(parent, f"tapetrace-{os.getpid()}")
        try:
            os.mkdir(folder)
        except FileExistsError:
            pass
        except OSError:
            continue
        try:
            Path(folder, "pids.max").write_text(str(cap))
            Path(folder, "cgroup.procs").write_text("0")
        except OSError:
            try:
                os.rmdir(folder)
            except OSError:
                pass
            continue
        got["pids_cap"] = cap
        got["pids_cgroup"] = folder
        return
