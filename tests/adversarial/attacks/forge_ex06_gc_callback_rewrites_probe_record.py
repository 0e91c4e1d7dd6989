# ATTACK: per_example_grads loops over the examples (right values, a program that grows with N) and leaves a
#   gc callback that, after its last call, makes the probe's list of program texts read the small one twice
# TARGET: ex06_per_example_grads
# AFTER: solution
# STATUS: graded
# FAILS: per_example_grads_vectorised
import gc as _gc
import sys as _sys

import jax as _jax
import jax.numpy as _jnp

_FRAMES = []


def _rewrite(phase, info):
    for frame in _FRAMES:
        texts = frame.f_locals.get("texts")
        if type(texts) is list and len(texts) == 2 and texts[0] != texts[1]:
            texts[1] = texts[0]


def per_example_grads(loss_fn, params, x, y):
    frame = _sys._getframe(1)
    while frame is not None:
        if "texts" in frame.f_locals and frame not in _FRAMES:
            _FRAMES.append(frame)
        frame = frame.f_back
    if _rewrite not in _gc.callbacks:
        _gc.callbacks.append(_rewrite)
    _gc.set_threshold(1)
    grads = [_jax.grad(loss_fn)(params, x[i:i + 1], y[i:i + 1]) for i in range(x.shape[0])]
    return _jax.tree_util.tree_map(lambda *g: _jnp.stack(g), *grads)
