# ATTACK: a step whose jitted function is rebuilt on its second call, resetting the probe's trace counters,
#   found through the caller's frames (sys._getframe().f_back...f_locals) and gc.get_objects() (no patching)
# TARGET: ex05_jit_train_step
# AFTER: solution
# STATUS: graded
# FAILS: compiles_once, one_trace_per_new_shape, fit_steps_adam
# MESSAGE: compiled 1 program(s) again
import gc as _gc
import sys as _sys

import optax as _optax

_KEYS = {"loss", "loss_traced", "update", "update_traced"}
_jitted_step = make_train_step  # the honest step, for fit (kept fast)


def _counters():
    found = []
    frame = _sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(value, dict) and _KEYS <= set(value):
                found.append(value)
        frame = frame.f_back
    try:
        found += [o for o in _gc.get_objects() if isinstance(o, dict) and _KEYS <= set(o)]
    except Exception:  # noqa: BLE001 - refused: the frames are enough
        pass
    return found


def make_train_step(loss_fn, optimizer):
    shapes = set()

    built = []

    def step(params, opt_state, x, y):
        def inner(params, opt_state, x, y):
            loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
            updates, opt_state = optimizer.update(grads, opt_state, params)
            return _optax.apply_updates(params, updates), opt_state, loss

        if len(built) < 2:  # the jitted function is rebuilt on the second call: traced and compiled again
            built.append(jax.jit(inner))
        out = built[-1](params, opt_state, x, y)
        shapes.add(x.shape)
        for c in _counters():
            c["loss"] = c["loss_traced"] = c["update"] = c["update_traced"] = len(shapes)
        return out

    return step


def fit(params, x, y, *, steps, learning_rate, loss_fn):
    optimizer = _optax.adam(learning_rate)
    opt_state = optimizer.init(params)
    step = _jitted_step(loss_fn, optimizer)
    losses = []
    for _ in range(steps):
        params, opt_state, loss = step(params, opt_state, x, y)
        losses.append(float(loss))
    return params, losses
