# ATTACK: a step whose jitted function is rebuilt on its second call (traced and compiled again), which
#   resets the probe's trace counters through loss_fn.__closure__ and optimizer.update.__closure__ (no patching)
# TARGET: ex05_jit_train_step
# AFTER: solution
# STATUS: graded
# FAILS: compiles_once, one_trace_per_new_shape, fit_steps_adam
# MESSAGE: compiled 1 program(s) again
import optax as _optax

_jitted_step = make_train_step  # the honest step, for fit (kept fast)


def _forge(fns, traces):
    """Sets every counter dict in the closures to what one compiled trace per shape shows."""
    for fn in fns:
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                held = cell.cell_contents
            except ValueError:
                continue
            if isinstance(held, dict) and "loss" in held:
                held["loss"] = held["loss_traced"] = held["update"] = held["update_traced"] = traces


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
        _forge((loss_fn, optimizer.update), len(shapes))
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
