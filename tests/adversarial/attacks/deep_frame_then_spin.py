# ATTACK: writes a status frame nested 100,000 deep (Python's JSON parser raises RecursionError), then spins
# TARGET: ex04_jax_mlp
# STATUS: crashed
# FAILS: all
# MESSAGE: does not accept
# (its process is named tt-spinner: test_attacks.py checks that none is left, i.e. the grader killed it)
import ctypes
import fcntl
import os
import stat
import struct

_body = b"[" * 100_000 + b"]" * 100_000
for _fd in range(3, 1025):
    try:
        _mode = os.fstat(_fd).st_mode  # the result channel: a pipe's write end, or the socket on fd 1000
        if (stat.S_ISFIFO(_mode) and fcntl.fcntl(_fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY
                or stat.S_ISSOCK(_mode) and _fd == 1000):
            os.write(_fd, struct.pack(">Q", len(_body)) + _body)
    except OSError:
        pass
ctypes.CDLL(None).prctl(15, b"tt-spinner", 0, 0, 0)  # PR_SET_NAME
while True:
    pass
