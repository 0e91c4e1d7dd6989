# ATTACK: as forge_ex06_command_taken_without_waiting, and then makes up the bytes the loop's thread did not read:
#   a signal sent to that thread (pthread_kill) runs a Python handler there, while it waits in its readv, that reads
#   64 KiB of a file (its rchar grows as if it had read the stolen command)
# TARGET: ex06_per_example_grads
# AFTER: solution
# STATUS: graded
# FAILS: all | torch_vectorised
# MESSAGE: wrote on the grader's result pipe|model.forward ran
# (10/10 in 3 runs of 3 with the byte count alone; between two probes the loop's thread now defers Python's signal
#  handlers and blocks every signal: autograder/workers/worker.py)
import json as _json
import os as _os
import select as _select
import signal as _signal
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
            try:
                _signal.pthread_kill(_MAIN, _signal.SIGUSR1)
            except (OSError, ValueError):
                pass
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


def _pad(signum, frame):
    with open(_sys.executable, "rb") as fh:
        fh.read(1 << 16)


_CPU = min(_os.sched_getaffinity(0))
_MAIN = _threading.main_thread().ident
_signal.signal(_signal.SIGUSR1, _pad)
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
