# ATTACK: torch_per_example_grads answers the forward count's call with a frame of its own ("forward ran once"),
#   then never returns: it runs the worker's loop itself from inside that call (the loop's own functions, found in
#   its frame), echoing every fence and serving every later check honestly, so no second answer is ever written
# TARGET: ex06_per_example_grads
# AFTER: solution
# STATUS: graded
# FAILS: all
# MESSAGE: wrote on the grader's result pipe
# (10/10 with a loop over the examples before the kernel's check: autograder/workers/confirm.py; the main thread
#  waits for the next command one C-level call deeper than the loop does)
import json as _json
import os as _os
import struct as _struct
import sys as _sys


def _frame(obj):
    payload = _json.dumps(obj).encode()
    return _struct.pack(">Q", len(payload)) + payload


def _loop_frame():
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "worker_main":
        f = f.f_back
    return f


def _serve_the_rest(loop):
    recv = _sys.modules["autograder.core.wire"].recv
    send, send_frame, answer = loop["send"], loop["send_frame"], loop["answer"]
    fence, cmd_fd, res_fd = loop["fence"], loop["cmd_fd"], loop["res_fd"]
    seal_probe = _sys.modules["autograder.workers.worker"]._seal_probe
    tampered = loop.get("tampered") or []
    while True:
        try:
            req = recv(cmd_fd)
        except (EOFError, OSError):
            _os._exit(0)
        if isinstance(req, dict) and fence in req:
            send(res_fd, {fence: req[fence]})
            continue
        with loop["serving"]():
            sealed = seal_probe(loop["table"], loop["mod"], req, loop["path"])
        data, tampered = answer(sealed, loop["changes"], loop["restore"], tampered, loop["tampered_response"])
        send_frame(res_fd, data)


def torch_per_example_grads(model, loss_fn, x, y):
    if _sys._getframe(1).f_code.co_name == "probe_torch_calls":  # the forward count's probe only
        f = _loop_frame()
        if f is not None:
            loop = dict(f.f_locals)
            try:
                _os.write(loop["res_fd"], _frame({"ok": True, "value": {"calls": 1, "n": int(x.shape[0])}}))
                _serve_the_rest(loop)
            except (KeyError, OSError):
                pass
    names = [name for name, _ in model.named_parameters()]
    params = [p for _, p in model.named_parameters()]
    per_example = {name: [] for name in names}
    for i in range(x.shape[0]):
        loss = loss_fn(model(x[i:i + 1]), y[i:i + 1])
        for name, g in zip(names, torch.autograd.grad(loss, params)):
            per_example[name].append(g)
    return {name: torch.stack(gs) for name, gs in per_example.items()}
