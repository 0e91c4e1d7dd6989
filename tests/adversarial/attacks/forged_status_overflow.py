# ATTACK: at import, writes a load status whose array shape is 1e999 on the result pipe (decoding it raised OverflowError)
# TARGET: ex01_torch_mlp
# STATUS: crashed
# FAILS: all
# MESSAGE: does not accept
# (before, OverflowError escaped the wire's checks: "no worker could start", grader_error after the retry alone;
#  autograder/core/wire.py recv now makes anything decoding raises a broken protocol)
import fcntl as _fcntl
import os as _os
import stat as _stat
import struct as _struct

_payload = b'{"status": "loaded", "missing": [], "x": {"__nd__": "float32", "shape": [1e999], "data": ""}}'
for _fd in range(3, 1025):
    try:
        _mode = _os.fstat(_fd).st_mode  # the result channel: a pipe's write end, or the socket on fd 1000
        if (_stat.S_ISFIFO(_mode) and _fcntl.fcntl(_fd, _fcntl.F_GETFL) & _os.O_ACCMODE == _os.O_WRONLY
                or _stat.S_ISSOCK(_mode) and _fd == 1000):
            _os.write(_fd, _struct.pack(">Q", len(_payload)) + _payload)
    except OSError:
        pass
