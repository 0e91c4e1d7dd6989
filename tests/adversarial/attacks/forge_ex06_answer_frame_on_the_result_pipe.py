# ATTACK: torch_per_example_grads loops over the examples (right values), but first writes a whole answer
#   frame of its own ("forward ran once") on the worker's result pipe, which its process holds
# TARGET: ex06_per_example_grads
# AFTER: solution
# STATUS: graded
# FAILS: all
# MESSAGE: wrote on the grader's result pipe (a second answer to one call)
import json as _json
import struct as _struct
import sys as _sys


def torch_per_example_grads(model, loss_fn, x, y):
    if _sys._getframe(1).f_code.co_name == "probe_torch_calls":  # the forward count's probe only
        payload = _json.dumps({"ok": True, "value": {"calls": 1, "n": int(x.shape[0])}}).encode()
        try:
            import os as _os

            _os.write(1000, _struct.pack(">Q", len(payload)) + payload)
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
