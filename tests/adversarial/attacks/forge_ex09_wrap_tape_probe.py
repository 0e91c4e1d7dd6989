# ATTACK: manual_grads calls .backward(), and the module wraps ex09's autodiff probe (through
#   sys.modules) so that it reports no autodiff
# TARGET: ex09_autograd_tape
# AFTER: solution
# STATUS: graded
# FAILS: all
# MESSAGE: changed the grader's own code
import sys as _sys

_P = _sys.modules.get("autograder.exercises.ex09_autograd_tape.probes")
if _P is None:
    import autograder.exercises.ex09_autograd_tape.probes as _P
_real = _P.probe_manual_tape


def _quiet(mod, points):
    _real(mod, points)
    return {"used": []}


_P.probe_manual_tape = _quiet


def manual_grads(w, x, b):
    t = [torch.tensor(float(v), requires_grad=True) for v in (w, x, b)]
    ((t[0] * t[1] + t[2]) ** 2).backward()
    return tuple(float(v.grad) for v in t)
