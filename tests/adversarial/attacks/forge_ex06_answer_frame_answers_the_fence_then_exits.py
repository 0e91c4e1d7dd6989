# ATTACK: writes an answer frame ("forward ran once"), reads the grader's fence from the command pipe and echoes it,
#   reads the grader's next command and ends its process: the kernel shows its main thread waiting for that
#   command from inside the call, not from the worker's loop (autograder/workers/confirm.py)
# TARGET: ex06_per_example_grads
# AFTER: solution
# STATUS: graded
# FAILS: all
# MESSAGE: wrote on the grader's result pipe
# (docs/security.md, "The result pipe is the worker's": the grader sends nothing more until the kernel shows the
#  worker's loop waiting for it; before, the next test met a crash and the forged answer stood: 9.5/10)
import json as _json
import os as _os
import struct as _struct
import sys as _sys


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


def _command_fd():
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "worker_main":
        f = f.f_back
    return None if f is None else f.f_locals.get("cmd_fd")


def torch_per_example_grads(model, loss_fn, x, y):
    if _sys._getframe(1).f_code.co_name == "probe_torch_calls":  # the forward count's probe only
        fd = _command_fd()
        try:
            _os.write(1000, _frame({"ok": True, "value": {"calls": 1, "n": int(x.shape[0])}}))
            if fd is not None:
                _os.write(1000, _frame(_read_frame(fd)))
                _read_frame(fd)  # the next test's command
        except (OSError, EOFError, ValueError):
            pass
        _os._exit(0)
    names = [name for name, _ in model.named_parameters()]
    params = [p for _, p in model.named_parameters()]
    per_example = {name: [] for name in names}
    for i in range(x.shape[0]):
        loss = loss_fn(model(x[i:i + 1]), y[i:i + 1])
        for name, g in zip(names, torch.autograd.grad(loss, params)):
            per_example[name].append(g)
    return {name: torch.stack(gs) for name, gs in per_example.items()}
