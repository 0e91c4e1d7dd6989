"""A seccomp filter for a student's worker: the system calls no exercise needs, refused.

Installed last by :mod:`autograder.sandbox.isolate`, unprivileged (``no_new_privs``), on every
isolation level. It refuses with ``EPERM`` (never kills: a refused call is an ordinary
``OSError`` in the student's code):

- the network: ``socket``/``socketpair`` of any family but ``AF_UNIX``, and ``connect`` of any
  socket (a Unix socket on the filesystem, such as ``/var/run/docker.sock``, stays reachable
  through a read-only mount and a fresh network namespace alike);
- reaching other processes: ``ptrace``, ``process_vm_readv/writev``, ``kcmp``, ``pidfd_getfd``,
  ``pidfd_send_signal``; optionally (``confine_signals``, where Landlock cannot scope signals)
  ``kill``/``tgkill``/``rt_(tg)sigqueueinfo`` to anything but the worker itself or its own process
  group, and ``tkill``;
- leaving the sandbox: ``unshare``, ``setns``, ``clone`` with namespace flags (``clone3``, whose
  flags a filter cannot read, answers ``ENOSYS`` so libc falls back to ``clone``), ``mount`` and
  the new mount API, ``pivot_root``, ``chroot``;
- replacing or closing the worker's own pipes to the grader (``kept_fds``: its command and result
  descriptors): ``dup2``/``dup3`` onto them, ``close`` of them, a ``close_range`` that covers them, so that
  the loop's answers always reach the grader (code that pointed the result pipe at ``/dev/null`` for one
  answer, then back, could otherwise have the grader take a forged answer for the real one);
- kernel interfaces that bypass other layers or widen the attack surface: ``io_uring_*`` (its
  operations skip seccomp), ``bpf``, ``perf_event_open``, ``userfaultfd``, keyrings, modules,
  ``kexec``, ``reboot``, swap, ``acct``, ``quotactl``, file handles.

Only x86_64 and aarch64 are known; elsewhere :func:`install` returns False and the level
accounting says so. The filter is a classic BPF program built here (no libseccomp).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

AF_UNIX = 1
CLONE_NAMESPACES = 0x7E020000  # NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET

# Numbers for (x86_64, aarch64), checked against the kernel headers of 2026-12.
_SYSCALLS: dict[str, tuple[int, int]] = {
    "socket": (41, 198), "socketpair": (53, 199), "connect": (42, 203),
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
    "kcmp": (312, 272), "pidfd_getfd": (438, 438), "pidfd_send_signal": (424, 424),
    "bpf": (321, 280), "perf_event_open": (298, 241), "userfaultfd": (323, 282),
    "keyctl": (250, 219), "add_key": (248, 217), "request_key": (249, 218),
    "kexec_load": (246, 104), "kexec_file_load": (320, 294), "init_module": (175, 105),
    "finit_module": (313, 273), "delete_module": (176, 106), "reboot": (169, 142),
    "swapon": (167, 224), "swapoff": (168, 225), "acct": (163, 89), "quotactl": (179, 60),
    "open_by_handle_at": (304, 265), "name_to_handle_at": (303, 264),
    "unshare": (272, 97), "setns": (308, 268), "mount": (165, 40), "umount2": (166, 39),
    "pivot_root": (155, 41), "chroot": (161, 51), "mount_setattr": (442, 442),
    "move_mount": (429, 429), "open_tree": (428, 428), "fsopen": (430, 430), "fsconfig": (431, 431),
    "fsmount": (432, 432), "fspick": (433, 433), "clone": (56, 220), "clone3": (435, 435),
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427),
    "kill": (62, 129), "tkill": (200, 130), "tgkill": (234, 131), "rt_sigqueueinfo": (129, 138),
    "rt_tgsigqueueinfo": (297, 240),
    "close": (3, 57), "dup3": (292, 24), "close_range": (436, 436),
}
_DUP2_X86_64 = 33  # aarch64 has no dup2 (libc calls dup3)
REFUSED = ("connect", "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
           "pidfd_send_signal", "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
           "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon",
           "swapoff", "acct", "quotactl", "open_by_handle_at", "name_to_handle_at", "unshare", "setns", "mount",
           "umount2", "pivot_root", "chroot", "mount_setattr", "move_mount", "open_tree", "fsopen", "fsconfig",
           "fsmount", "fspick", "io_uring_setup", "io_uring_enter", "io_uring_register")
_ARCH = {"x86_64": (0, 0xC000003E), "amd64": (0, 0xC000003E), "aarch64": (1, 0xC00000B7), "arm64": (1, 0xC00000B7)}
_X32_BIT = 0x40000000

# classic BPF
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JGT_K = 0x25
_JSET_K = 0x45
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_KILL = 0x80000000
_RET_ERRNO = 0x00050000
_NR, _ARCH_OFF = 0, 4
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2


def _arg_low(i: int) -> int:
    """Offset of the low 32 bits of syscall argument ``i`` in ``struct seccomp_data`` (little endian)."""
    return 16 + 8 * i


def _ins(code: int, k: int, jt: int = 0, jf: int = 0) -> tuple[int, int, int, int]:
    return (code, jt, jf, k & 0xFFFFFFFF)


def _refuse(err: int = errno.EPERM) -> tuple[int, int, int, int]:
    return _ins(_RET_K, _RET_ERRNO | err)


def _arg_in(nr: int, arg: int, allowed: list[int]) -> list[tuple[int, int, int, int]]:
    """A block: for syscall ``nr``, allow when argument ``arg`` (low 32 bits) is one of ``allowed``."""
    body = [_ins(_LD_W_ABS, _arg_low(arg))]
    n = len(allowed)
    for i, value in enumerate(allowed):
        body.append(_ins(_JEQ_K, value, jt=n - i, jf=0))  # to the "allow" after the refusal
    body += [_refuse(), _ins(_RET_K, _RET_ALLOW)]
    return _block(nr, body)


def _block(nr: int, body: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """``if nr == NR: body`` (the body ends in returns); reloads the number first."""
    return [_ins(_LD_W_ABS, _NR), _ins(_JEQ_K, nr, jt=0, jf=len(body))] + body


def _arg_refused(nr: int, arg: int, refused: list[int]) -> list[tuple[int, int, int, int]]:
    """A block: for syscall ``nr``, refuse when argument ``arg`` (low 32 bits: a descriptor) is one of ``refused``."""
    body = [_ins(_LD_W_ABS, _arg_low(arg))]
    n = len(refused)
    for i, value in enumerate(refused):
        body.append(_ins(_JEQ_K, value, jt=n - i, jf=0))  # to the refusal after the "allow"
    body += [_ins(_RET_K, _RET_ALLOW), _refuse()]
    return _block(nr, body)


def _range_refused(nr: int, kept: list[int]) -> list[tuple[int, int, int, int]]:
    """A block: for ``close_range(first, last, flags)``, refuse when ``first <= k <= last`` for a kept ``k``."""
    body: list[tuple[int, int, int, int]] = []
    m = len(kept)
    for j, k in enumerate(kept):
        body += [_ins(_LD_W_ABS, _arg_low(0)), _ins(_JGT_K, k, jt=2, jf=0),  # first > k: the next k
                 _ins(_LD_W_ABS, _arg_low(1)), _ins(_JGE_K, k, jt=4 * (m - j) - 3, jf=0)]  # last >= k: refused
    body += [_ins(_RET_K, _RET_ALLOW), _refuse()]
    return _block(nr, body)


def program(machine: str, pid: int, confine_signals: bool,
            kept_fds: tuple[int, ...] = ()) -> list[tuple[int, int, int, int]] | None:
    """The filter's instructions for ``machine`` (``platform.machine()``), or None when unknown.

    Args:
        machine: the CPU architecture.
        pid: the worker's pid (signals to it, its threads and its process group stay allowed).
        confine_signals: also refuse signals to other processes.
        kept_fds: descriptors no call may replace or close (the worker's pipes to the grader).
    """
    if machine not in _ARCH:
        return None
    col, audit_arch = _ARCH[machine]

    def nr(name: str) -> int:
        return _SYSCALLS[name][col]

    prog = [_ins(_LD_W_ABS, _ARCH_OFF), _ins(_JEQ_K, audit_arch, jt=1, jf=0), _ins(_RET_K, _RET_KILL)]
    if col == 0:  # x86_64: the x32 ABI's numbers carry bit 30
        prog += [_ins(_LD_W_ABS, _NR), _ins(_JGE_K, _X32_BIT, jt=0, jf=1), _refuse()]
    for name in REFUSED:
        prog += _block(nr(name), [_refuse()])
    prog += _block(nr("clone3"), [_refuse(errno.ENOSYS)])
    prog += _block(nr("clone"), [_ins(_LD_W_ABS, _arg_low(0)), _ins(_JSET_K, CLONE_NAMESPACES, jt=0, jf=1),
                                 _refuse(), _ins(_RET_K, _RET_ALLOW)])
    kept = sorted({int(k) for k in kept_fds})
    if kept:
        if col == 0:
            prog += _arg_refused(_DUP2_X86_64, 1, kept)
        prog += _arg_refused(nr("dup3"), 1, kept)
        prog += _arg_refused(nr("close"), 0, kept)
        prog += _range_refused(nr("close_range"), kept)
    prog += _arg_in(nr("socket"), 0, [AF_UNIX])
    prog += _arg_in(nr("socketpair"), 0, [AF_UNIX])
    if confine_signals:
        own = [0, pid] + ([(-pid) & 0xFFFFFFFF] if pid > 1 else [])  # never kill(-1): every process
        prog += _arg_in(nr("kill"), 0, own)
        prog += _block(nr("tkill"), [_refuse()])
        for name in ("tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
            prog += _arg_in(nr(name), 0, [pid])
    prog.append(_ins(_RET_K, _RET_ALLOW))
    return prog


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(confine_signals: bool = False, kept_fds: tuple[int, ...] = ()) -> bool:
    """Installs the filter on the calling thread (a worker is single-threaded when this runs).

    Args:
        confine_signals: also refuse signals to other processes.
        kept_fds: descriptors no call may replace or close (the worker's pipes to the grader).

    Returns:
        Whether the filter is in place.
    """
    prog = program(platform.machine().lower(), os.getpid(), confine_signals, kept_fds)
    if prog is None:
        return False
    raw = b"".join(struct.pack("HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw, len(raw))
    fprog = _SockFprog(len(prog), ctypes.cast(buf, ctypes.c_void_p))
    from autograder.sandbox.libc import c_library

    libc = c_library()
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0
