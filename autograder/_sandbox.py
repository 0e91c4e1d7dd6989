"""Containment applied inside a worker before student code is loaded.

Layers, each tried and recorded (the JSON reports what was obtained):
- resource limits: address space (memory cap), file size, no core dumps;
- a new process session (the grader kills the whole group);
- Linux namespaces when permitted (root, or CAP_SYS_ADMIN): no network
  (fresh net namespace: loopback only, down) and a private mount namespace
  in which the reference solutions, hidden suites and tests are covered by
  empty tmpfs mounts;
- an import blocker for those packages (defence in depth where namespaces
  are refused, e.g. unprivileged Docker);
- scratch working directory, HOME and TMPDIR.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import resource
import sys
from pathlib import Path

CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
MS_REC = 16384
MS_PRIVATE = 1 << 18
BLOCKED_PACKAGES = ("solutions", "tests", "autograder.hidden")


def _vm_size_bytes() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _libc():
    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name or "libc.so.6", use_errno=True)


class _Blocker:
    """Meta-path finder refusing the grader's private packages."""

    def find_spec(self, fullname, path=None, target=None):  # noqa: D401
        for pkg in BLOCKED_PACKAGES:
            if fullname == pkg or fullname.startswith(pkg + "."):
                raise ModuleNotFoundError(f"No module named {fullname!r}")
        return None


def apply(*, scratch: str, mem_bytes: int, fsize_bytes: int, hide: list[str],
          network: bool = False) -> dict[str, object]:
    """Contains the current process; returns what was obtained.

    Args:
        scratch: directory that becomes cwd, HOME and TMPDIR.
        mem_bytes: extra address space allowed beyond what is mapped now.
        fsize_bytes: largest file the process may write.
        hide: directories to cover with an empty tmpfs.
        network: keep the network (default: drop it when possible).

    Returns:
        A dict describing the isolation level obtained.
    """
    got: dict[str, object] = {}
    try:
        os.setsid()
    except OSError:
        pass
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
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
    got["network_dropped"] = False
    got["private_mounts"] = False
    if sys.platform.startswith("linux"):
        libc = _libc()
        flags = CLONE_NEWNS | (0 if network else CLONE_NEWNET)
        if libc.unshare(flags) == 0:
            got["network_dropped"] = not network
            if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) == 0:
                ok = True
                for d in hide:
                    if os.path.isdir(d):
                        if libc.mount(b"tmpfs", d.encode(), b"tmpfs", 0, b"size=1k,mode=000") != 0:
                            ok = False
                got["private_mounts"] = ok
    sys.meta_path.insert(0, _Blocker())
    os.makedirs(scratch, exist_ok=True)
    os.chdir(scratch)
    os.environ["HOME"] = scratch
    os.environ["TMPDIR"] = scratch
    got["scratch_dir"] = True
    return got
