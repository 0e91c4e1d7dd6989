# VALID: jax.jit applied after the definition, loss and grad computed separately (the loss is traced twice per
#   compile), tree.map instead of apply_updates, floats converted at the end.
# (expected: full marks; was a case of tests/test_ex05_jit_train_step_extra.py)
import jax
import optax


def make_train_step(loss_fn, optimizer):
    def step(params, opt_state, x, y):
        loss = loss_fn(params, x, y)
        grads = jax.grad(loss_fn)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = jax.tree.map(lambda p, u: p + u, params, updates)
        return params, opt_state, loss

    return jax.jit(step)


def fit(params, x, y, *, steps, learning_rate, loss_fn):
    opt = optax.adam(learning_rate)
    state = opt.init(params)
    step = make_train_step(loss_fn, opt)
    losses = []
    for _ in range(steps):
        params, state, loss = step(params, state, x, y)
        losses.append(loss)
    return params, [float(v) for v in losses]
