# VALID: step computes jax.grad and the loss separately, tree_map update, jax.jit(step) returned; fit runs
#   the steps inside one jitted lax.scan and converts the losses at the end
from functools import partial

import jax
import jax.numpy as jnp
import optax


def make_train_step(loss_fn, optimizer):
    def step(params, opt_state, x, y):
        grads = jax.grad(loss_fn)(params, x, y)
        loss = loss_fn(params, x, y)
        updates, new_state = optimizer.update(grads, opt_state, params)
        new_params = jax.tree_util.tree_map(lambda p, u: p + u, params, updates)
        return new_params, new_state, loss

    return jax.jit(step)


def fit(params, x, y, *, steps, learning_rate, loss_fn):
    optimizer = optax.adam(learning_rate=learning_rate)
    step = make_train_step(loss_fn, optimizer)

    @jax.jit
    def run(params, opt_state):
        def body(carry, _):
            p, s = carry
            p, s, loss = step(p, s, x, y)
            return (p, s), loss

        (params, opt_state), losses = jax.lax.scan(body, (params, opt_state), None, length=steps)
        return params, losses

    params, losses = run(params, optimizer.init(params))
    return params, [float(l) for l in losses]
