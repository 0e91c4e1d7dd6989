# ATTACK: forward writes a forged "the probe itself failed" frame (kind internal) on the result pipe
# TARGET: ex01_torch_mlp
# AFTER: solution
# STATUS: graded
# FAILS: all
# MESSAGE: wrote on the grader's result pipe
# (what a student's worker says is never the grader's trouble: autograder/core/protocol.py probe_error, docs/security.md
#  "Whose trouble"; before, this frame made the exercise grader_error: a blank cell, exit 3, --resume forever; now no
#  echo of the grader's fence confirms it, and the exercise scores 0)
import fcntl as _fcntl
import json as _json
import os as _os
import stat as _stat
import struct as _struct


_pipes = {}  # the worker's result pipe (a copy of it): the worker's own answers go to /dev/null from now on


def _forge(obj):
    payload = _json.dumps(obj).encode()
    frame = _struct.pack(">Q", len(payload)) + payload
    if not _pipes:
        for fd in range(3, 1025):
            try:
                writable = _fcntl.fcntl(fd, _fcntl.F_GETFL) & _os.O_ACCMODE == _os.O_WRONLY
                mode = _os.fstat(fd).st_mode  # the result channel: a pipe's write end, or the socket on fd 1000
                if writable and _stat.S_ISFIFO(mode) or _stat.S_ISSOCK(mode) and fd == 1000:
                    _pipes[fd] = _os.dup(fd)
                    _os.dup2(_os.open(_os.devnull, _os.O_WRONLY), fd)
            except OSError:
                pass
    for copy in _pipes.values():
        _os.write(copy, frame)


def _forward(self, x):
    _forge({"ok": False, "kind": "internal", "message": "probe failed: grader bug in probe_forward"})


MLP.forward = _forward
