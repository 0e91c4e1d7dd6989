"""Linux namespaces for a student's worker: no network, a pid namespace of its own, a read-only filesystem.

Owns :func:`_namespaces` (root with CAP_SYS_ADMIN only: CI, a grading box): a fresh net namespace
(loopback only, down), the worker alone in its pid namespace (an outer process mirrors its end), every
mount read-only, /tmp and /dev/shm as small private tmpfs (what the worker still needs from under them
bound back), the private paths covered by empty tmpfs, a private /proc, then an unprivileged uid and no
capabilities (:mod:`autograder.sandbox.privileges`). Called by :func:`autograder.sandbox.isolate.apply`.
"""

from __future__ import annotations

import os
import resource
import signal
import sys
from pathlib import Path

from autograder.sandbox.libc import c_library
from autograder.sandbox.privileges import _drop_bounding_set, _drop_capabilities, _drop_uid

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
PR_SET_PDEATHSIG = 1
_SKIP_RO = ("/proc", "/sys", "/dev")


def _mount_points() -> list[str]:
    points = []
    try:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            mp = line.split()[4].replace("\\040", " ")
            points.append(mp)
    except OSError:
        pass
    return sorted(set(points), key=len)


def _needed_under(covered: tuple[str, ...]) -> tuple[list[str], dict[str, str]]:
    """What the worker still needs that lives under a folder about to be covered.

    Returns:
        ``(directories, links)``: real directories to bind back, and symbolic links on the way to a
        needed path (``link -> target``, e.g. a virtualenv under /tmp linking elsewhere) to recreate.
    """
    engine = str(Path(__file__).resolve().parents[2])
    candidates = [engine, sys.prefix, sys.base_prefix, *[p for p in sys.path if p and os.path.isdir(p)]]

    def under(p: str) -> bool:
        return any(p == d or p.startswith(d + "/") for d in covered)

    out: list[str] = []
    links: dict[str, str] = {}
    for lexical in candidates:
        lexical = os.path.abspath(lexical)
        part = ""
        for name in lexical.strip("/").split("/"):
            part = f"{part}/{name}"
            if under(part) and os.path.islink(part):
                links[part] = os.readlink(part)
        c = os.path.realpath(lexical)
        if under(c) and os.path.isdir(c):
            if not any(c == o or c.startswith(o + "/") for o in out):
                out = [o for o in out if not o.startswith(c + "/")] + [c]
    return out, links


def _mirror_child(pid: int) -> None:
    """The outer process: close the worker's pipes, wait for the inner one, mirror its end."""
    for fd in range(3, 256):
        try:
            os.close(fd)
        except OSError:
            pass
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(1)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):  # no handler may be set for these (OSError)
            signal.signal(sig, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _namespaces(hide: list[str], network: bool, got: dict[str, object], skip: list[str] | None = None) -> str | None:
    """Enters new namespaces; returns the new scratch root (a private /tmp) or None."""
    libc = c_library()
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | (0 if network else CLONE_NEWNET)
    if libc.unshare(flags) != 0:
        return None
    got["network_dropped"] = not network
    pid = os.fork()
    if pid != 0:
        _mirror_child(pid)  # never returns
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    got["pid_namespace"] = True
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return None
    ro_ok = True
    for mp in _mount_points():
        if mp.startswith(_SKIP_RO):
            continue
        if libc.mount(None, mp.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY, None) != 0:
            ro_ok = ro_ok and mp != "/"
    got["read_only_filesystem"] = ro_ok
    covered = ("/tmp", "/dev/shm")
    keep, links = _needed_under(covered)
    held = {p: os.open(p, os.O_PATH | os.O_DIRECTORY) for p in keep}
    # size and inode caps: all a worker may write (autograder/sandbox/quota.py)
    for d, size in (("/tmp", b"size=256m,nr_inodes=10000,mode=1777"), ("/dev/shm", b"size=64m,nr_inodes=1000,mode=1777")):
        if os.path.isdir(d):
            libc.mount(b"tmpfs", d.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, size)
    for p, fd in held.items():  # the engine or Python itself lived there (e.g. `otter run` unpacks to /tmp)
        os.makedirs(p, exist_ok=True)
        src = f"/proc/self/fd/{fd}".encode()
        if libc.mount(src, p.encode(), None, MS_BIND | MS_REC, None) == 0:
            libc.mount(None, p.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY, None)
        os.close(fd)
    for link, target in sorted(links.items()):
        try:
            os.makedirs(os.path.dirname(link), exist_ok=True)
            os.symlink(target, link)
        except OSError:
            pass
    hidden_ok = True
    for d in hide:
        if os.path.isdir(d):
            if libc.mount(b"tmpfs", d.encode(), b"tmpfs", MS_RDONLY, b"size=4k,mode=000") != 0:
                hidden_ok = False
        elif os.path.isfile(d) and libc.mount(b"/dev/null", d.encode(), None, MS_BIND, None) != 0:
            hidden_ok = False  # a private file (e.g. the otter zip's settings) reads as empty
    got["private_dirs_hidden"] = hidden_ok
    for mp in _mount_points():  # its process cap (a cgroup) must stay where it is: no way back to the parent
        if mp.startswith("/sys/fs/cgroup"):
            libc.mount(None, mp.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY, None)
    if libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV, None) == 0:
        got["proc_private"] = True
    # an unprivileged uid of its own here too: the kernel never applies a process limit to root (a fork
    # bomb would fill the machine's process table); the bounding set goes first (that needs CAP_SETPCAP)
    _drop_bounding_set(libc)
    if "uid" not in (skip or []):
        os.makedirs("/tmp/scratch", exist_ok=True)
        _drop_uid("/tmp/scratch", got)
    got["capabilities_dropped"] = _drop_capabilities(libc)
    return "/tmp"
