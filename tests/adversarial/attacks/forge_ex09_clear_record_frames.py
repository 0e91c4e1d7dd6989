# ATTACK: manual_grads calls .backward(), then empties the probe's record of autodiff calls, found in its
#   caller's frame (sys._getframe(1).f_locals; no patching)
# TARGET: ex09_autograd_tape
# AFTER: solution
# STATUS: graded
# FAILS: manual_grads_without_autograd
# MESSAGE: erased
import sys as _sys


def manual_grads(w, x, b):
    t = [torch.tensor(float(v), requires_grad=True) for v in (w, x, b)]
    ((t[0] * t[1] + t[2]) ** 2).backward()
    frame = _sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                value.clear()
        frame = frame.f_back
    return tuple(float(v.grad) for v in t)
