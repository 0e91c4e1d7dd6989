"""A worker forked from a zygote shares no writable memory with it or with its siblings.

``_zygote.private_memory`` runs in every forked worker before its code: every shared mapping it
inherited (a semaphore, a shared anonymous or file mapping) becomes private, same bytes, same address.
tests/adversarial/test_attacks.py checks the same on real workers of a real zygote.
"""

from __future__ import annotations

import mmap
import multiprocessing
import os

from autograder.workers import zygote as _zygote


def _in_child(body) -> int:  # noqa: ANN001 - a function run in a forked child
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            _zygote.private_memory()
            body()
            code = 0
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_a_shared_mapping_becomes_private_with_its_bytes():
    shared = mmap.mmap(-1, 8192)  # MAP_SHARED | MAP_ANONYMOUS
    shared[:5] = b"zygot"

    def child() -> None:
        assert shared[:5] == b"zygot"  # same bytes, same address
        shared[:5] = b"child"

    assert _in_child(child) == 0
    assert shared[:5] == b"zygot"


def test_a_lock_a_worker_took_and_kept_blocks_no_one():
    lock = multiprocessing.get_context("fork").Lock()  # a semaphore in /dev/shm, mapped shared

    def child() -> None:
        assert lock.acquire(timeout=5)  # and never released: the child exits holding it

    assert _in_child(child) == 0
    assert lock.acquire(timeout=5), "a lock a worker took and kept blocks the next one"
    lock.release()


def test_nothing_shared_is_left():
    keep = mmap.mmap(-1, 4096)

    def child() -> None:
        with open("/proc/self/maps") as fh:
            assert not [line for line in fh if line.split()[1][3] == "s"]

    assert _in_child(child) == 0
    keep.close()
