"""Privileges a student's worker gives up: its capabilities, and root itself for an unprivileged uid.

Owns dropping the capability bounding set and every capability with ``no_new_privs``
(:func:`_drop_capabilities`, :func:`_drop_bounding_set`), becoming a fresh unprivileged user owning the
scratch where Python's files are readable by such a user (:func:`_drop_uid`, :func:`_uid_feasible`,
:func:`_readable_by_others`, :func:`reachable_by_others`, :func:`_python_dirs`) and the layers of a worker without namespaces
(:func:`_fallback`). Used by :mod:`autograder.sandbox.namespaces` and :mod:`autograder.sandbox.isolate`.
"""

from __future__ import annotations

import ctypes
import os
import resource
import stat
import sys
from pathlib import Path

from autograder.sandbox.libc import c_library

PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38


def _drop_capabilities(libc: ctypes.CDLL) -> bool:
    """Empties the bounding set, clears every capability set (``capset``) and sets no_new_privs.

    Returns:
        Whether ``capset`` took.
    """
    _drop_bounding_set(libc)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    header = Header(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (Data * 2)()
    ok = libc.capset(ctypes.byref(header), data) == 0
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    return ok


def _readable_by_others(path: str) -> bool:
    """Whether a user who is neither the owner nor in the group could read ``path`` (modes only)."""
    real = os.path.realpath(path)
    parts = real.split("/")
    for i in range(2, len(parts) + 1):
        ancestor = "/".join(parts[:i]) or "/"
        try:
            st = os.stat(ancestor)
        except OSError:
            return False
        last = i == len(parts)
        if os.path.isdir(ancestor):
            need = 0o005 if last else 0o001  # list and enter the directory itself; enter its ancestors
            if st.st_mode & need != need:
                return False
        elif last and not st.st_mode & 0o004:
            return False
    return True


REACH_LIMIT = 20_000
"""Entries :func:`reachable_by_others` looks at before it answers yes (it cannot tell: fail closed)."""


def reachable_by_others(path: str, limit: int = REACH_LIMIT) -> bool:
    """Whether a user who is neither the owner nor in the group could read anything at or under ``path``.

    Unlike :func:`_readable_by_others` it looks inside: a folder others may enter but not list (``0711``)
    still gives away every file whose name can be guessed (``class/bob/work.ipynb``), so each entry
    under an enterable folder counts. Run it with the grader's rights (before a worker drops its uid):
    a folder it cannot list, or more than ``limit`` entries, is a yes.

    Args:
        path: a place kept from students (a class's folder, the run's folder, the solutions).
        limit: how many entries to look at, at most.

    Returns:
        True when some regular file there has the others' read bit and every folder on the way
        (ancestors included) the others' search bit.
    """
    real = os.path.realpath(path)
    parts = real.split("/")
    for i in range(2, len(parts)):
        try:
            if not os.stat("/".join(parts[:i])).st_mode & 0o001:
                return False
        except OSError:
            return False
    stack, seen = [real], 0
    while stack:
        here = stack.pop()
        try:
            st = os.lstat(here)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_mode & 0o004:
            return True
        if not stat.S_ISDIR(st.st_mode) or not st.st_mode & 0o001:
            continue  # a link is judged where it leads (a place of its own, or what students may read anyway)
        try:
            with os.scandir(here) as entries:
                for entry in entries:
                    seen += 1
                    if seen > limit:
                        return True
                    stack.append(entry.path)
        except OSError:
            return True
    return False


def _python_dirs() -> list[str]:
    """Directories a worker's Python may import from or read (stdlib, site-packages, sys.path)."""
    dirs = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.__file__)]
    dirs += [p for p in sys.path if p and os.path.isdir(p)]
    return list(dict.fromkeys(os.path.realpath(d) for d in dirs))


def _uid_feasible() -> str | None:
    """None if an unprivileged user could run this worker's Python, else why not."""
    if not hasattr(os, "setresuid") or os.geteuid() != 0:
        return "not root"
    for d in _python_dirs():
        if not _readable_by_others(d):
            return f"{d} is not readable by other users"
    return None


def _drop_uid(scratch: str, got: dict[str, object]) -> None:
    """Becomes a fresh unprivileged user (uid = gid, random, in no /etc/passwd) owning the scratch."""
    why = _uid_feasible()
    if why:
        got["uid_note"] = why
        return
    uid = 200_000 + int.from_bytes(os.urandom(4), "big") % 800_000
    try:
        for root, dirs, files in os.walk(scratch):
            for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
                os.chown(name, uid, uid)
        nproc = max(512, 8 * (os.cpu_count() or 1))  # threads count too (XLA, torch)
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    except OSError as err:
        got["uid_note"] = f"refused: {err.strerror or err}"
        return
    got["uid"] = uid
    os.environ["USER"] = os.environ["LOGNAME"] = "tapetrace-student"  # getpass.getuser() without a passwd entry


def _drop_bounding_set(libc: ctypes.CDLL) -> None:
    """Empties the capability bounding set (before anything that loses CAP_SETPCAP, which that needs)."""
    last = 40
    try:
        last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        pass
    for cap in range(last + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)


def _fallback(scratch: str, got: dict[str, object], skip: list[str]) -> None:
    """The layers of a worker without namespaces (after Landlock's): an unprivileged uid, no capabilities."""
    libc = c_library()
    _drop_bounding_set(libc)  # first: dropping it needs CAP_SETPCAP
    if "uid" not in skip:
        _drop_uid(scratch, got)
    got["capabilities_dropped"] = _drop_capabilities(libc)
