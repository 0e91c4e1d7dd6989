# ATTACK: manual_grads calls .backward(); sys.modules becomes a dict subclass whose get(), called by the
#   grader's own tamper check after the probe returned, empties the probe's record in the answer being sent
# TARGET: ex09_autograd_tape
# AFTER: solution
# STATUS: graded
# FAILS: all
# MESSAGE: changed the grader's own code
import sys as _sys


class _Modules(dict):
    def get(self, key, default=None):
        frame = _sys._getframe(1)
        while frame is not None:
            for value in list(frame.f_locals.values()):
                inner = value.get("value") if type(value) is dict else None
                if type(inner) is dict and "used" in inner:
                    inner["used"] = []
            frame = frame.f_back
        return super().get(key, default)


_sys.modules = _Modules(_sys.modules)


def manual_grads(w, x, b):
    t = [torch.tensor(float(v), requires_grad=True) for v in (w, x, b)]
    ((t[0] * t[1] + t[2]) ** 2).backward()
    return tuple(float(v.grad) for v in t)
