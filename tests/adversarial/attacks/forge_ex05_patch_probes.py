# ATTACK: an eager step (no jax.jit) that replaces ex05's trace-counting probes through sys.modules
#   with versions reporting one trace per shape: every test fails (the grader's code was changed)
# TARGET: ex05_jit_train_step
# AFTER: solution
# STATUS: graded
# FAILS: all
# MESSAGE: changed the grader's own code
import sys as _sys

import optax as _optax

_P = _sys.modules.get("autograder.exercises.ex05_jit_train_step.probes")
if _P is None:
    import autograder.exercises.ex05_jit_train_step.probes as _P


_shapes = set()


def _honest_counts(mod, batch):
    _shapes.add(batch)
    n = len(_shapes)
    return {"loss": n, "update": n, "loss_traced": n, "update_traced": n}


_real_fit = _P.probe_fit


def _fit(mod, params, steps, learning_rate, return_params, max_loss_calls=None):
    out = _real_fit(mod, params, steps, learning_rate, return_params, None)
    out["loss_calls"] = 1
    return out


_P.probe_trace_call = _honest_counts
_P.probe_fit = _fit


def make_train_step(loss_fn, optimizer):
    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return _optax.apply_updates(params, updates), opt_state, loss

    return step
