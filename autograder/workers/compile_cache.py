"""Both sides: the reference's compiled programs, lent to student workers by key only.

Grader side: :class:`Lender`, :func:`refuse` and :func:`is_request` (``handle`` answers with them). Worker side:
:class:`Borrower` and :func:`borrow` (``worker``'s borrowing stage).

JAX compiles every new program a check runs, on both sides: a lone submission compiles ~190
programs in its students' workers and ~150 in the reference's, and compiling is most of what
grading costs. A student whose code builds the same program as the reference (the probes' own
helpers at the same shapes, a function written the reference's way) need not compile it again:
the reference's workers already wrote it to the run's JAX compilation cache.

A student's worker never sees that cache: its folder stays unreadable to it (sandbox). Instead
its JAX asks the grader for one entry at a time, naming the entry's key, over the worker's own
pipes (:class:`Borrower`), and the grader answers with that entry or nothing (:class:`Lender`).
JAX's key is a SHA-256 of the whole program (its canonical bytes, compile options, devices, XLA
flags, versions), so a worker can only ask for a program it already holds: it cannot list the
cache, cannot fetch a program it could not build itself, and cannot write an entry (there is no
such request, and the filesystem stays read-only to it), so nothing it sends can reach the
reference or a later run. What a hit does show the worker is that the reference compiled
exactly that program, at those shapes (see the README's sandbox section for what that means and
``TAPETRACE_JAX_CACHE=off``, which lends nothing).

Only the main thread, while the worker runs its module's load or a probe, borrows: that is when
the grader reads the worker's requests (``_handle.Worker``). A student's own thread compiles for
itself.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from autograder.core import wire as _wire

# A worker's request, and the grader's answer to it (the only two messages of this exchange).
REQUEST = "compile_cache_get"
ANSWER = "compile_cache_entry"
# JAX's keys: the module's name (``jit_<function>``, sanitised by JAX), "-", the SHA-256 in hex.
# Anything else (a path, a dot file, another suffix) is not a key and gets nothing.
_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,199}-[0-9a-f]{64}")
_SUFFIX = "-cache"  # jax._src.lru_cache's file name for an entry
MAX_ENTRY_BYTES = 64 * 1024**2
# Requests answered while the grader waits for one answer (a load, a probe): a check compiles a few
# dozen programs, and 20,000 compiles take minutes, far beyond any timeout. A worker asking for more
# floods the grader: it is treated as broken.
MAX_REQUESTS = 20_000


def is_request(msg: Any) -> bool:
    """Whether a worker's message asks for a cache entry (and is nothing else)."""
    return isinstance(msg, dict) and len(msg) == 1 and REQUEST in msg


class Lender:
    """Grader side: answers workers' requests from one cache folder, counting what it lent.

    Args:
        folder: the run's JAX compilation cache (written by the reference's workers only).
    """

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.asked = 0
        self.lent = 0
        self._lock = threading.Lock()

    def entry(self, key: Any) -> bytes | None:
        """The entry stored under ``key``, or None (no such entry, or ``key`` is not a key).

        Opens only ``<folder>/<key>-cache``, not through a link, and only a regular file.
        """
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            return None
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(os.path.join(self.folder, key + _SUFFIX), flags)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ENTRY_BYTES:
                return None
            chunks, left = [], st.st_size
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            return b"".join(chunks)
        except OSError:
            return None
        finally:
            os.close(fd)

    def answer(self, msg: dict[str, Any]) -> dict[str, Any]:
        """The reply to a request (:func:`is_request`): ``{ANSWER: uint8 array or None}``."""
        data = self.entry(msg.get(REQUEST))
        with self._lock:
            self.asked += 1
            self.lent += data is not None
        return {ANSWER: None if data is None else np.frombuffer(data, dtype=np.uint8)}


def refuse(_msg: dict[str, Any]) -> dict[str, Any]:
    """The reply where nothing is lent (the run has no cache, or the worker gets none)."""
    return {ANSWER: None}


class Borrower:
    """Worker side: a JAX compilation cache that asks the grader for entries and never stores any.

    Implements ``jax._src.compilation_cache_interface.CacheInterface`` (``get``/``put``) without
    importing it, so it works on JAX versions that moved it.

    Args:
        cmd_fd: the worker's command pipe (the grader's answers arrive there).
        res_fd: the worker's result pipe (requests go there).
    """

    def __init__(self, cmd_fd: int, res_fd: int) -> None:
        self._cmd_fd = cmd_fd
        self._res_fd = res_fd
        self._main = threading.get_ident()
        self._open = False

    def serve(self, on: bool) -> None:
        """Opens (``True``) or closes the time the grader reads requests: while it waits for this worker's answer
        (its load, or one probe). A worker's loop calls this bound method itself, not a context manager: between
        two probes it calls nothing a student's code could rebind (``contextlib``'s classes are a library's)."""
        self._open = on

    @contextmanager
    def serving(self) -> Iterator[None]:
        """:meth:`serve` around a block."""
        self.serve(True)
        try:
            yield
        finally:
            self.serve(False)

    def get(self, key: str, _ident: Any = threading.get_ident, _send: Any = _wire.send,
            _recv: Any = _wire.recv) -> bytes | None:
        """The entry for ``key`` from the grader, or None (also outside :meth:`serving` or off the main thread).
        What it calls is bound at import (a student's code could rebind ``threading.get_ident``)."""
        if not self._open or _ident() != self._main:
            return None
        _send(self._res_fd, {REQUEST: key})
        reply = _recv(self._cmd_fd)
        entry = reply.get(ANSWER) if isinstance(reply, dict) else None
        return entry.tobytes() if isinstance(entry, np.ndarray) and entry.size else None

    def put(self, key: str, value: bytes) -> None:
        """Never stores: only the reference's workers write the cache."""


def borrow(cmd_fd: int, res_fd: int) -> Borrower | None:
    """Makes this process's JAX look programs up through the grader (call once, before any compile).

    Returns:
        The borrower (:meth:`Borrower.serve` on around the load and each probe, then off), or None where this
        JAX keeps its cache elsewhere than ``jax._src.compilation_cache`` expects: then it compiles all.
    """
    if "jax" not in sys.modules:  # a PyTorch-only worker: it compiles no JAX program
        return None
    try:
        import jax
        from jax._src import compilation_cache as cc
    except ImportError:
        return None
    if not all(hasattr(cc, n) for n in ("_cache", "_cache_initialized", "_get_cache")) or cc._cache is not None:
        return None
    borrower = Borrower(cmd_fd, res_fd)
    cc._cache = borrower
    cc._cache_initialized = True
    # a miss is compiled here and never written: skip serialising it for a put that stores nothing
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 1e9)
    return borrower
