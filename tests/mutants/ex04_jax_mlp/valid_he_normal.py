# VALID: he_normal's truncated normal, key split in a loop, jnp.dot/jnp.maximum, optax's BCE, numpy accuracy.
# (expected: full marks; was a case of tests/test_ex04_jax_mlp_extra.py)
import jax
import jax.numpy as jnp
import numpy as np
import optax


def init_params(layer_dims, key):
    init = jax.nn.initializers.he_normal()
    ws, bs = [], []
    for d_in, d_out in zip(layer_dims[:-1], layer_dims[1:]):
        key, sub = jax.random.split(key)
        ws.append(init(sub, (d_in, d_out), jnp.float32))
        bs.append(jnp.zeros(d_out))
    return {"W": ws, "b": bs}


def mlp_forward(params, x):
    n = len(params["W"])
    for i in range(n):
        x = jnp.dot(x, params["W"][i]) + params["b"][i]
        if i < n - 1:
            x = jnp.maximum(x, 0)
    return x


def bce_loss(params, x, y):
    z = mlp_forward(params, x)[:, 0]
    return optax.sigmoid_binary_cross_entropy(z, y).mean()


def accuracy(params, x, y):
    z = mlp_forward(params, x)[:, 0]
    return float(np.mean(np.asarray(z >= 0) == np.asarray(y == 1)))
