"""Landlock (Linux >= 5.13): an unprivileged allow-list of files for a student's worker.

Where namespaces are refused (a container with Docker's default privileges), this is what keeps
a student's code away from the reference solutions, the hidden suites, other submissions and
everything a later run reads: the worker restricts *itself*, so it needs no privilege, and the
restriction holds for its children and cannot be lifted.

The allow-list is built from three sets of paths:

- read (and execute) beneath: the system (``/usr``, ``/lib*``, ``/bin``, ``/sbin``, ``/etc``), Python's own
  directories and ``sys.path``, the engine's package, the dynamic loader's folders the grader names
  (``LD_LIBRARY_PATH``, ``CUDA_HOME``), ``/proc``, ``/sys``; never ``/opt``, ``/srv``, ``/var`` or a home folder
  whole (a course's folder, where ``tapetrace build --out`` may have written the solutions, lies there);
  the engine's checkout, on ``sys.path`` only for the engine's sake, is listed but not read (an
  instructor's results, notes or earlier runs kept there stay out of reach);
  ``/dev`` also for writing existing files (``/dev/null``) and their ioctls, never creating;
- everything beneath the worker's scratch directory;
- denied paths carved out of the above: a read root that contains a denied path is replaced by
  rules on each of its children (recursively), so the denied path and nothing else is left out.

Access rights unknown to the running kernel's ABI are dropped; where the ABI allows it (>= 4) TCP
``bind``/``connect`` are denied too, and (>= 6) signals and abstract Unix sockets are scoped to
the worker's own domain. Landlock also stops a sandboxed process from tracing (``ptrace``,
``/proc/PID/mem``, ``/proc/PID/cwd``) any process outside its domain.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterable, Iterator

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same on every architecture
_VERSION_FLAG = 1
_RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_ABI_FS = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

READ = EXECUTE | READ_FILE | READ_DIR
DEVICES = READ | WRITE_FILE | TRUNCATE | IOCTL_DEV
ALL = _ABI_FS[5]
# What a worker reads of the system, the least it needs: its libraries and settings, /proc and /sys (not /opt: a
# course's folder lies there as often as a vendor's tree; Python's folders and the loader's are read roots of their own)
SYSTEM_ROOTS = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/proc", "/sys")
# Never readable, wherever they sit under a read root.
SECRETS = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssh", "/etc/sudoers",
           "/etc/sudoers.d", "/etc/security/opasswd")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    from autograder.sandbox.libc import c_library  # the one loaded C library (syscall returns a long)

    return c_library()


def abi_version() -> int:
    """The kernel's Landlock ABI version (0: none, or refused by a seccomp policy)."""
    if not sys.platform.startswith("linux"):
        return 0
    ver = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION_FLAG))
    return int(ver) if ver > 0 else 0


def _inside(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def carve(root: str, access: int, denied: Iterable[str]) -> Iterator[tuple[str, int]]:
    """Rules granting ``access`` beneath ``root`` except beneath every denied path.

    Args:
        root: a real (symlink-free) path.
        access: the rights to grant.
        denied: real paths to leave out.

    Yields:
        ``(path, access)`` rules; files get only the rights that apply to files. A carved directory
        keeps its listing right (it is inherited beneath it: names are visible, contents are not).
        Symbolic links inside a carved directory are skipped: what they point to is allowed (or
        not) where it lies.
    """
    denied = [d for d in denied if _inside(d, root)]
    if not denied:
        rights = access if os.path.isdir(root) else access & FILE_RIGHTS
        if rights:  # a file under a folder that is only listed gets no rule
            yield root, rights
        return
    if root in denied or not os.path.isdir(root):
        return
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    # Listing stays allowed (Python's import system lists every directory it searches), reading does not:
    # names beneath a denied directory can be seen, their contents cannot.
    if access & READ_DIR:
        yield root, READ_DIR
    for entry in entries:
        if entry.is_symlink():
            continue
        yield from carve(entry.path, access, denied)


def plan(*, scratch: str | list[str], read: Iterable[str], denied: Iterable[str],
         listed: Iterable[str] = ()) -> list[tuple[str, int]]:
    """The rules for a worker (see the module docstring); ``scratch``: the folder(s) it may write; ``listed``:
    folders whose names may be listed (beneath them too) but whose files are read only where another rule
    says so (the engine's checkout: its package and its virtual environment are read roots of their own)."""
    # a denied path not made yet (a run's output) still carves its folder: a file made there later is under no rule
    deny = sorted({os.path.realpath(d) for d in [*denied, *SECRETS]
                   if os.path.lexists(d) or os.path.isdir(os.path.dirname(os.path.abspath(d)))})
    roots: dict[str, int] = {}
    for path, access in [*((p, READ) for p in (*SYSTEM_ROOTS, *read)), *((p, READ_DIR) for p in listed),
                         ("/dev", DEVICES)]:
        if path and os.path.exists(path):
            real = os.path.realpath(path)
            roots[real] = roots.get(real, 0) | access
    # a root beneath another with the same rights adds nothing
    kept = {r: a for r, a in roots.items()
            if not any(o != r and _inside(r, o) and roots[o] & a == a for o in roots)}
    rules = [rule for root, access in sorted(kept.items()) for rule in carve(root, access, deny)]
    rules += [(os.path.realpath(w), ALL) for w in ([scratch] if isinstance(scratch, str) else scratch)]
    return rules


def restrict(rules: list[tuple[str, int]], abi: int) -> dict[str, object]:
    """Restricts the calling thread (and its future children) to ``rules``.

    Args:
        rules: from :func:`plan`.
        abi: :func:`abi_version` (> 0).

    Returns:
        What was obtained: ``{"landlock": abi, "landlock_net": bool, "landlock_scoped": bool}``, or
        ``{"landlock": 0, "landlock_error": why}``.
    """
    libc = _libc()
    fs = _ABI_FS.get(abi, _ABI_FS[5])
    attr = _RulesetAttr(fs, NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0,
                        SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    fd = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        return {"landlock": 0, "landlock_error": os.strerror(ctypes.get_errno())}
    try:
        for path, access in rules:
            try:
                pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                rule = _PathBeneath(access & fs, pfd)
                if libc.syscall(_ADD_RULE, ctypes.c_int(fd), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule),
                                ctypes.c_uint32(0)) != 0:
                    err = ctypes.get_errno()
                    return {"landlock": 0, "landlock_error": f"rule for {path}: {os.strerror(err)}"}
            finally:
                os.close(pfd)
        if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS: required without CAP_SYS_ADMIN
            return {"landlock": 0, "landlock_error": "no_new_privs refused"}
        if libc.syscall(_RESTRICT_SELF, ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
            return {"landlock": 0, "landlock_error": os.strerror(ctypes.get_errno())}
    finally:
        os.close(fd)
    return {"landlock": abi, "landlock_net": abi >= 4, "landlock_scoped": abi >= 6}
