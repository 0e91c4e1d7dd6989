# ATTACK: per_example_grads is a Python loop over the examples hidden inside jax.pure_callback: the
#   traced program is one callback, the same size for every batch
# TARGET: ex06_per_example_grads
# AFTER: solution
# STATUS: graded
# FAILS: per_example_grads_vectorised
import numpy as _np


_GRADS = {}


def per_example_grads(loss_fn, params, x, y):
    shapes = jax.tree.map(lambda p: jax.ShapeDtypeStruct((x.shape[0], *p.shape), p.dtype), params)

    grad = _GRADS.setdefault(loss_fn, jax.jit(jax.grad(loss_fn)))  # compiled once per shape: fast

    def loop(p, xs, ys):
        rows = [grad(p, xs[i:i + 1], ys[i:i + 1]) for i in range(xs.shape[0])]
        return jax.tree.map(lambda *leaves: _np.stack([_np.asarray(v) for v in leaves]), *rows)

    return jax.pure_callback(loop, shapes, params, x, y)
