"""The C library, loaded once per process: shared by the sandbox's layers (isolate, landlock, seccomp).

A module of its own so that the layers need not import each other for it (no cycle).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools


@functools.cache
def c_library() -> ctypes.CDLL:
    """The C library, loaded once per process (the zygote loads it before forking: see :func:`preload`).

    ``ctypes.util.find_library`` runs ``ldconfig -p`` in a subprocess, a fork of this whole process,
    on every call: once per process, not once per caller."""
    lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    lib.syscall.restype = ctypes.c_long
    return lib
