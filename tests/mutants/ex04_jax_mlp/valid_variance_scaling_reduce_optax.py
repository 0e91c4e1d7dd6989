# VALID: He init via jax.nn.initializers.variance_scaling(2, fan_in, normal) with split-in-a-loop keys;
#   forward by functools.reduce; optax.sigmoid_binary_cross_entropy; accuracy from sigmoid >= 0.5 and .item()
import functools

import jax
import jax.numpy as jnp
import optax

_he = jax.nn.initializers.variance_scaling(2.0, "fan_in", "normal")


def init_params(layer_dims, key):
    params = {"W": [], "b": []}
    for d_in, d_out in zip(layer_dims[:-1], layer_dims[1:]):
        key, sub = jax.random.split(key)
        params["W"].append(_he(sub, (d_in, d_out), jnp.float32))
        params["b"].append(jnp.zeros(d_out))
    return params


def _layer(h, wb):
    w, b = wb
    return jax.nn.relu(jnp.dot(h, w) + b)


def mlp_forward(params, x):
    *hidden, last = list(zip(params["W"], params["b"]))
    h = functools.reduce(_layer, hidden, x)
    return jnp.dot(h, last[0]) + last[1]


def bce_loss(params, x, y):
    logits = mlp_forward(params, x)[:, 0]
    return optax.sigmoid_binary_cross_entropy(logits, y).mean()


def accuracy(params, x, y):
    preds = jax.nn.sigmoid(mlp_forward(params, x)[:, 0]) >= 0.5
    return jnp.mean(preds == y.astype(bool)).item()
