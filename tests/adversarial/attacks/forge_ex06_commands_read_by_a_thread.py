# ATTACK: at import, starts a thread that reads the grader's commands from a copy of the worker's command pipe
#   (its descriptor from the worker loop's frame) and answers the forward count's probe itself ("forward ran
#   once"), leaving every other command to the loop
# TARGET: ex06_per_example_grads
# AFTER: solution
# STATUS: graded
# FAILS: all
# MESSAGE: wrote on the grader's result pipe
# (the kernel shows a thread other than the loop's blocked reading the command pipe: autograder/workers/confirm.py)
import json as _json
import os as _os
import struct as _struct
import sys as _sys
import threading as _threading


def _frame(obj):
    payload = _json.dumps(obj).encode()
    return _struct.pack(">Q", len(payload)) + payload


def _read_frame(fd):
    def exact(n):
        out = b""
        while len(out) < n:
            chunk = _os.read(fd, n - len(out))
            if not chunk:
                raise EOFError
            out += chunk
        return out

    (size,) = _struct.unpack(">Q", exact(8))
    return _json.loads(exact(size))


def _steal(fd):
    while True:
        try:
            req = _read_frame(fd)
        except (OSError, EOFError, ValueError):
            return
        if isinstance(req, dict) and req.get("probe") == "torch_calls":
            n = len(req.get("kwargs", {}).get("y", {}).get("data", [])) or 8
            _os.write(1000, _frame({"ok": True, "value": {"calls": 1, "n": n}}))


def _start():
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "worker_main":
        f = f.f_back
    if f is not None and "cmd_fd" in f.f_locals:
        try:
            _threading.Thread(target=_steal, args=(_os.dup(f.f_locals["cmd_fd"]),), daemon=True).start()
        except OSError:
            pass


_start()
