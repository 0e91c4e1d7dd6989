# ATTACK: manual_grads holds 700 MiB and has three forked children take 400 MiB each (every process under its own RLIMIT_AS, 1900 MiB in all) so the OOM killer strikes, then SIGKILLs its worker: a death once judged the container's OOM killer's (grader_error), now the student's, at its own memory cgroup's cap
# TARGET: ex09_autograd_tape
# AFTER: solution
# STATUS: graded
# FAILS: manual_grads_at_random_points, manual_grads_without_autograd, manual_grads_returns_floats
# MESSAGE: MemoryError
import os as _os
import signal as _signal

_honest = manual_grads  # noqa: F821 - the solution's, above
_MIB = 2**20


def _child(go: int, done: int) -> None:
    try:
        if _os.read(go, 1):
            hold = bytearray(400 * _MIB)  # zero-filled: every page touched
            _os.write(done, b"1")
            while hold:
                _signal.pause()
    finally:
        _os._exit(0)


def manual_grads(w, x, b):
    children = []  # (pid, go, done): forked first, so the worker's own block is not in their pages
    for _ in range(3):
        go_r, go_w = _os.pipe()
        done_r, done_w = _os.pipe()
        pid = _os.fork()
        if pid == 0:
            _child(go_r, done_w)
        _os.close(go_r)
        _os.close(done_w)
        children.append((pid, go_w, done_r))
    try:
        hold = bytearray(700 * _MIB)  # the largest process: the OOM killer's first choice
        for _pid, go, done in children:
            _os.write(go, b"1")
            if not _os.read(done, 1):  # b"": that child was killed while it allocated
                break
        del hold
    finally:
        for pid, go, done in children:
            try:
                _os.kill(pid, _signal.SIGKILL)
            except OSError:
                pass
            _os.close(go)
            _os.close(done)
    # ignored where the worker is its pid namespace's first process: the OOM killer then killed it above
    _os.kill(_os.getpid(), _signal.SIGKILL)
    return _honest(w, x, b)
