# ATTACK: torch_per_example_grads writes a whole answer frame of its own ("forward ran once") on the worker's
#   result pipe, then ends its process before the worker's loop could answer the grader's fence
# TARGET: ex06_per_example_grads
# AFTER: solution
# STATUS: graded
# FAILS: torch_vectorised
# MESSAGE: the process died
import json as _json
import os as _os
import struct as _struct
import sys as _sys

_honest = torch_per_example_grads  # the solution's, above


def torch_per_example_grads(model, loss_fn, x, y):
    if _sys._getframe(1).f_code.co_name == "probe_torch_calls":  # the forward count's probe only
        payload = _json.dumps({"ok": True, "value": {"calls": 1, "n": int(x.shape[0])}}).encode()
        try:
            _os.write(1000, _struct.pack(">Q", len(payload)) + payload)
        except OSError:
            pass
        _os._exit(0)
    return _honest(model, loss_fn, x, y)
