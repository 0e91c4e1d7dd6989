# ATTACK: the MLP's first forward writes an answer frame of its own ({"ok": true, ...}) on the worker's result pipe,
#   then runs as the solution does: the grader reads a made-up answer first and the real one after it
# TARGET: ex01_torch_mlp
# AFTER: solution
# STATUS: graded
# FAILS: all
# MESSAGE: wrote on the grader's result pipe (a second answer to one call)
import json as _json
import os as _os
import struct as _struct

_honest_forward = MLP.forward
_done = []


def _forged_forward(self, x):
    if not _done:
        _done.append(True)
        payload = _json.dumps({"ok": True, "value": [[0.0]]}).encode()
        try:
            _os.write(1000, _struct.pack(">Q", len(payload)) + payload)
        except OSError:
            pass
    return _honest_forward(self, x)


MLP.forward = _forged_forward
