"""Containment applied inside a student's worker before its code is loaded.

Layers, each tried and recorded (the JSON's ``isolation`` says what was obtained):

- resource limits: address space (memory cap), file size, no core dumps;
- a new session, so the grader can kill the whole process group;
- Linux namespaces when permitted (root or CAP_SYS_ADMIN, e.g. CI, a grading
  box; often refused in unprivileged Docker such as Gradescope's):
  * network: a fresh net namespace (loopback only, down): no network;
  * pid: the student's process is alone in its pid namespace, so it cannot
    signal the grader, the zygote or another student's worker;
  * mounts: every mount becomes read-only, /tmp and /dev/shm become small
    private tmpfs (the scratch lives there), and the reference solutions,
    hidden suites, tests and other submissions are covered by empty tmpfs;
  * then every capability is dropped (no remounting back) and
    no_new_privs is set;
- an import blocker for the private packages (defence in depth where
  namespaces are refused);
- scratch working directory, HOME and TMPDIR.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import resource
import signal
import sys
from pathlib import Path

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
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
BLOCKED_PACKAGES = ("solutions", "tests", "autograder.hidden")
_SKIP_RO = ("/proc", "/sys", "/dev")


def _vm_size_bytes() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


class _Blocker:
    """Meta-path finder refusing the grader's private packages."""

    def find_spec(self, fullname, path=None, target=None):
        for pkg in BLOCKED_PACKAGES:
            if fullname == pkg or fullname.startswith(pkg + "."):
                raise ModuleNotFoundError(f"No module named {fullname!r}")
        return None


def _mount_points() -> list[str]:
    points = []
    try:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            mp = line.split()[4].replace("\\040", " ")
            points.append(mp)
    except OSError:
        pass
    return sorted(set(points), key=len)


def _needed_under(covered: tuple[str, ...]) -> list[str]:
    """Directories the worker still needs that live under a folder about to be covered."""
    engine = str(Path(__file__).resolve().parent.parent)
    candidates = [engine, sys.prefix, sys.base_prefix, *[p for p in sys.path if p and os.path.isdir(p)]]
    out: list[str] = []
    for c in candidates:
        c = os.path.realpath(c)
        if any(c == d or c.startswith(d + "/") for d in covered) and os.path.isdir(c):
            if not any(c == o or c.startswith(o + "/") for o in out):
                out = [o for o in out if not o.startswith(c + "/")] + [c]
    return out


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
        signal.signal(sig, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _drop_capabilities(libc: ctypes.CDLL) -> bool:
    last = 40
    try:
        last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        pass
    for cap in range(last + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)

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


def _namespaces(hide: list[str], network: bool, got: dict[str, object]) -> str | None:
    """Enters new namespaces; returns the new scratch root (a private /tmp) or None."""
    libc = _libc()
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
    keep = _needed_under(covered)
    held = {p: os.open(p, os.O_PATH | os.O_DIRECTORY) for p in keep}
    for d, size in (("/tmp", b"size=256m,mode=1777"), ("/dev/shm", b"size=64m,mode=1777")):
        if os.path.isdir(d):
            libc.mount(b"tmpfs", d.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, size)
    for p, fd in held.items():  # the engine or Python itself lived there (e.g. `otter run` unpacks to /tmp)
        os.makedirs(p, exist_ok=True)
        src = f"/proc/self/fd/{fd}".encode()
        if libc.mount(src, p.encode(), None, MS_BIND | MS_REC, None) == 0:
            libc.mount(None, p.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY, None)
        os.close(fd)
    hidden_ok = True
    for d in hide:
        if os.path.isdir(d) and libc.mount(b"tmpfs", d.encode(), b"tmpfs", MS_RDONLY, b"size=4k,mode=000") != 0:
            hidden_ok = False
    got["private_dirs_hidden"] = hidden_ok
    if libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV, None) == 0:
        got["proc_private"] = True
    got["capabilities_dropped"] = _drop_capabilities(libc)
    return "/tmp"


def apply(*, scratch: str, mem_bytes: int, fsize_bytes: int, hide: list[str],
          network: bool = False) -> tuple[str, dict[str, object]]:
    """Contains the current process.

    Args:
        scratch: preferred scratch directory (used when no private /tmp is possible).
        mem_bytes: extra address space allowed beyond what is mapped now.
        fsize_bytes: largest file the process may write.
        hide: directories to cover with an empty tmpfs.
        network: keep the network (default: drop it when possible).

    Returns:
        ``(scratch_dir, isolation)``: where student files go, and what was obtained.
    """
    got: dict[str, object] = {"network_dropped": False, "pid_namespace": False,
                              "read_only_filesystem": False, "private_dirs_hidden": False,
                              "capabilities_dropped": False}
    try:
        os.setsid()
    except OSError:
        pass
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if sys.platform.startswith("linux"):
        root = _namespaces(hide, network, got)
        if root:
            scratch = os.path.join(root, "scratch")
    if mem_bytes > 0:
        cap = _vm_size_bytes() + mem_bytes
        try:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            got["memory_cap_bytes"] = mem_bytes
        except (ValueError, OSError):
            got["memory_cap_bytes"] = None
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize_bytes, fsize_bytes))
        got["file_size_cap_bytes"] = fsize_bytes
    except (ValueError, OSError):
        got["file_size_cap_bytes"] = None
    sys.meta_path.insert(0, _Blocker())
    os.makedirs(scratch, exist_ok=True)
    os.chdir(scratch)
    os.environ["HOME"] = scratch
    os.environ["TMPDIR"] = scratch
    return scratch, got
