# ATTACK: takes the forward count's command from under the loop's blocked read without ever blocking in a read
#   itself: a thread started at import waits in select() on the worker's command channel, then peeks (MSG_PEEK |
#   MSG_DONTWAIT on the loop's own descriptor: no other descriptor); between calls the loop's thread is SCHED_IDLE
#   on the thief's CPU, so the thief runs first; it answers that command with a frame of its own ("forward ran
#   once") and leaves every other command to the loop
# TARGET: ex06_per_example_grads
# AFTER: solution
# STATUS: graded
# FAILS: all | torch_vectorised
# MESSAGE: wrote on the grader's result pipe|model.forward ran
# (10/10 in 3 runs of 3 before the grader counted the bytes the loop's thread reads: autograder/workers/confirm.py;
#  with pipes as channels, a thread spinning on preadv2(RWF_NOWAIT) that put the other commands back through
#  /proc/self/fd scored 10/10 in 2 runs of 4: a socket's end cannot be opened again)
import json as _json
import os as _os
import select as _select
import socket as _socket
import struct as _struct
import sys as _sys
import threading as _threading
import time as _time


def _frame(obj):
    payload = _json.dumps(obj).encode()
    return _struct.pack(">Q", len(payload)) + payload


def _thief(cmd_fd, res_fd, cpu):
    try:
        _os.sched_setaffinity(0, {cpu})
        chan = _socket.socket(fileno=cmd_fd)
    except OSError:
        return
    peek = _socket.MSG_PEEK | _socket.MSG_DONTWAIT
    while True:
        try:
            _select.select([cmd_fd], [], [])
            data = chan.recv(1 << 20, peek)
        except BlockingIOError:
            continue
        except OSError:
            break
        if not data:
            break
        try:
            (size,) = _struct.unpack(">Q", data[:8])
            req = _json.loads(data[8:8 + size])
        except Exception:
            req = None
        if isinstance(req, dict) and req.get("probe") == "torch_calls":
            chan.recv(8 + size, _socket.MSG_DONTWAIT)
            yv = req.get("kwargs", {}).get("y", {})
            n = len(yv.get("data", [])) if isinstance(yv, dict) else 8
            _os.write(res_fd, _frame({"ok": True, "value": {"calls": 1, "n": n or 8}}))
            continue
        while True:  # not the one: let the loop take it
            _time.sleep(0.001)
            try:
                if chan.recv(len(data), peek) != data:
                    break
            except BlockingIOError:
                break
    chan.detach()


def _start():
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "worker_main":
        f = f.f_back
    if f is not None and "cmd_fd" in f.f_locals:
        _threading.Thread(target=_thief, args=(f.f_locals["cmd_fd"], f.f_locals["res_fd"], _CPU), daemon=True).start()


_CPU = min(_os.sched_getaffinity(0))
_start()


def _between_calls(idle):
    try:
        _os.sched_setaffinity(0, {_CPU})
        _os.sched_setscheduler(0, _os.SCHED_IDLE if idle else _os.SCHED_OTHER, _os.sched_param(0))
    except OSError:
        pass


def torch_per_example_grads(model, loss_fn, x, y):
    _between_calls(False)
    try:
        return _per_example(model, loss_fn, x, y)
    finally:
        _between_calls(True)


def _per_example(model, loss_fn, x, y):
    names = [name for name, _ in model.named_parameters()]
    params = [p for _, p in model.named_parameters()]
    per_example = {name: [] for name in names}
    for i in range(x.shape[0]):
        loss = loss_fn(model(x[i:i + 1]), y[i:i + 1])
        for name, g in zip(names, torch.autograd.grad(loss, params)):
            per_example[name].append(g)
    return {name: torch.stack(gs) for name, gs in per_example.items()}
