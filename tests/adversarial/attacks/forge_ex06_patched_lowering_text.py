# ATTACK: per_example_grads loops over the examples (right values); jax.stages.Lowered.as_text is patched
#   to hand the grader the text of another, small program at every batch size
# TARGET: ex06_per_example_grads
# AFTER: solution
# STATUS: graded
# FAILS: per_example_grads_vectorised
import jax as _jax
import jax.numpy as _jnp

_REAL_AS_TEXT = _jax.stages.Lowered.as_text
_TEXT = []


def _as_text(self, *args, **kwargs):
    if not _TEXT:
        _TEXT.append(_REAL_AS_TEXT(_jax.jit(lambda v: v * 2.0).lower(_jnp.zeros(3)), *args, **kwargs))
    return _TEXT[0]


_jax.stages.Lowered.as_text = _as_text


def per_example_grads(loss_fn, params, x, y):
    grads = [_jax.grad(loss_fn)(params, x[i:i + 1], y[i:i + 1]) for i in range(x.shape[0])]
    return _jax.tree_util.tree_map(lambda *g: _jnp.stack(g), *grads)
