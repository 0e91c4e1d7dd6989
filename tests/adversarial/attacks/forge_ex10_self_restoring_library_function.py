# ATTACK: a copy that stops the model from training (every parameter's gradient zeroed by a hook, so the optimizer
#   built before the copy never moves a weight: EX10_NOT_TRAINING) and, during the call made by the leaves' probe
#   (found from the caller's frame), rebinds numpy's `array_equal` (a library function the probe looks up as
#   `np.array_equal` to compare the weights before and after a step) to a function that answers "they differ" once
#   per parameter and then puts the original back: the guard never compares library functions, and after the probe
#   nothing differs from what it was
# TARGET: ex10_bridge
# AFTER: solution
# STATUS: graded
# FAILS: to_torch_keeps_trainable_leaves, same_start_trains_alike
# (2 more points before the probes' attribute loads of modules and classes were frozen into their code,
#  autograder/workers/freeze.py: the forged function is never called, and the honest failure shows)
import sys as _sys

import numpy as _np

_honest_copy = jax_to_torch_mlp  # noqa: F821 (the solution's, above)


def _in_leaves_probe() -> bool:
    f = _sys._getframe(2)
    while f is not None:
        if f.f_code.co_name == "probe_to_torch_leaves":
            return True
        f = f.f_back
    return False


def jax_to_torch_mlp(params, model):
    _honest_copy(params, model)
    ps = list(model.parameters())
    for p in ps:
        p.register_hook(lambda g: g * 0.0)
    if not _in_leaves_probe():
        return
    real = _np.array_equal
    left = [len(ps)]

    def forged(*args, **kwargs):
        left[0] -= 1
        if left[0] <= 0:
            _np.array_equal = real  # back before anyone looks
        return False

    _np.array_equal = forged
