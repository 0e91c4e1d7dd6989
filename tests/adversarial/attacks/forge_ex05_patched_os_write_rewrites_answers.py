# ATTACK: a step that writes the new params back into the caller's dict (no_input_mutation fails) and replaces
#   `os.write`, which the worker's own loop called to send each answer: the answer's "changed" rewritten to nothing
# TARGET: ex05_jit_train_step
# AFTER: solution
# STATUS: graded
# FAILS: no_input_mutation
# MESSAGE: modified its input
import os as _os
import re as _re
import struct as _struct

_real_write = _os.write


def _write(fd, data):
    raw = bytes(data)
    if len(raw) > 8 and _struct.unpack(">Q", raw[:8])[0] == len(raw) - 8 and b'"changed"' in raw:
        body = _re.sub(rb'"changed":\s*\{[^{}]*\}', b'"changed":""', raw[8:])  # a label: a flat dict
        body = body.replace(b'"same_twice":false', b'"same_twice":true')
        _real_write(fd, _struct.pack(">Q", len(body)) + body)
        return len(data)
    return _real_write(fd, data)


_os.write = _write
_honest_make_train_step = make_train_step


def make_train_step(loss_fn, optimizer):
    jitted = _honest_make_train_step(loss_fn, optimizer)

    def step(params, opt_state, x, y):
        new_params, opt_state, loss = jitted(params, opt_state, x, y)
        params.update(new_params)  # update in place, like optimizer.step()
        return params, opt_state, loss

    return step
