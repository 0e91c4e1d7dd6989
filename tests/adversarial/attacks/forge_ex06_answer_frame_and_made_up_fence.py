# ATTACK: torch_per_example_grads loops over the examples (right values), but first writes an answer frame
#   ("forward ran once") and, after it, the grader's fence echoed with a made-up nonce, on the worker's result pipe
# TARGET: ex06_per_example_grads
# AFTER: solution
# STATUS: graded
# FAILS: all
# MESSAGE: wrote on the grader's result pipe (a second answer to one call)
import json as _json
import os as _os
import struct as _struct
import sys as _sys


def _frame(obj):
    payload = _json.dumps(obj).encode()
    return _struct.pack(">Q", len(payload)) + payload


def torch_per_example_grads(model, loss_fn, x, y):
    if _sys._getframe(1).f_code.co_name == "probe_torch_calls":  # the forward count's probe only
        try:
            _os.write(1000, _frame({"ok": True, "value": {"calls": 1, "n": int(x.shape[0])}})
                      + _frame({"tapetrace_fence": "0" * 32}))
        except OSError:
            pass
    names = [name for name, _ in model.named_parameters()]
    params = [p for _, p in model.named_parameters()]
    per_example = {name: [] for name in names}
    for i in range(x.shape[0]):
        loss = loss_fn(model(x[i:i + 1]), y[i:i + 1])
        for name, g in zip(names, torch.autograd.grad(loss, params)):
            per_example[name].append(g)
    return {name: torch.stack(gs) for name, gs in per_example.items()}
