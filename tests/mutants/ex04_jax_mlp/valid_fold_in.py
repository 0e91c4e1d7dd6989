# VALID: fold_in per layer, tuples instead of lists, logaddexp BCE, .item() accuracy.
# (expected: full marks; was a case of tests/test_ex04_jax_mlp_extra.py)
import jax
import jax.numpy as jnp


def init_params(layer_dims, key):
    pairs = list(zip(layer_dims[:-1], layer_dims[1:]))
    ws = tuple(jax.random.normal(jax.random.fold_in(key, i), (a, b)) * jnp.sqrt(2.0 / a)
               for i, (a, b) in enumerate(pairs))
    return {"W": ws, "b": tuple(jnp.zeros((b,), jnp.float32) for _, b in pairs)}


def mlp_forward(params, x):
    *hidden, last = list(zip(params["W"], params["b"]))
    for w, b in hidden:
        x = jax.nn.relu(x @ w + b)
    w, b = last
    return x @ w + b


def bce_loss(params, x, y):
    z = mlp_forward(params, x)[:, 0]
    return jnp.mean(jnp.logaddexp(0.0, z) - z * y)


def accuracy(params, x, y):
    z = mlp_forward(params, x)[:, 0]
    return jnp.mean((z >= 0) == (y == 1)).item()
