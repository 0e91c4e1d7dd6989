# ATTACK: coin_net computes both branches and picks with jnp.where (right values, no cond); it rebinds the
#   probe module's text reader to one that would put itself back (the probe holds its own: the change stays, seen)
# TARGET: ex08_jax_transforms
# AFTER: solution
# STATUS: graded
# FAILS: coin_net_uses_cond, count_ops_nested, dropout_keep_rate, dropout_values, dropout_deterministic, dropout_no_numpy_rng
# MESSAGE: changed the grader's own code
import sys as _sys

import jax as _jax
import jax.numpy as _jnp


def _cond_text(as_text):
    return as_text(_jax.jit(lambda p, v: _jax.lax.cond(p, lambda a: a + 1.0, lambda a: a * 2.0, v)).lower(
        True, _jnp.zeros(3)))


def _in_program_probe():
    frame = _sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "probe_coin_program":
            return True
        frame = frame.f_back
    return False


def coin_net(x, key, w1, w2):
    probes = _sys.modules.get("autograder.exercises.ex08_jax_transforms.probes")
    real = getattr(probes, "_as_text", None)
    if real is not None and getattr(real, "__name__", "") != "_forged" and _in_program_probe():
        def _forged(lowered):
            probes._as_text = real  # put back before the snapshot looks
            return _cond_text(real)

        probes._as_text = _forged
    return _jnp.where(_jax.random.bernoulli(key), _jax.nn.relu(x @ w1), _jax.nn.sigmoid(x @ w2))
