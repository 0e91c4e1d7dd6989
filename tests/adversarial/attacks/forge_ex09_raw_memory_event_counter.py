# ATTACK: manual_grads calls .backward(), then empties the probe's record of autodiff calls (found in its
#   caller's frame) and rewinds its event counter (an itertools.count) with a raw memory write (ctypes)
# TARGET: ex09_autograd_tape
# AFTER: solution
# STATUS: graded
# FAILS: manual_grads_without_autograd
# MESSAGE: erased
import ctypes as _ctypes
import itertools as _itertools
import sys as _sys


def manual_grads(w, x, b):
    t = [torch.tensor(float(v), requires_grad=True) for v in (w, x, b)]
    ((t[0] * t[1] + t[2]) ** 2).backward()
    frame = _sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                value.clear()
            elif type(value) is _itertools.count:
                _ctypes.c_ssize_t.from_address(id(value) + 16).value = 0
        frame = frame.f_back
    return tuple(float(v.grad) for v in t)
