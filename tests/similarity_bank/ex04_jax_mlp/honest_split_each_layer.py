from __future__ import annotations

import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp


def init_params(layer_dims: Sequence[int], key: jax.Array) -> dict:
    """He-normal weights and zero biases for an MLP.

    Args:
        layer_dims: `[d_0, d_1, ..., d_L]`, input width first, output width last.
        key: a PRNG key (`jax.random.PRNGKey(s)` or `jax.random.key(s)`).

    Returns:
        `{"W": [W0, ...], "b": [b0, ...]}` with `W[i]: (d_i, d_{i+1})` and
        `b[i]: (d_{i+1},)`, all float32.
    """
    params = {"W": [], "b": []}
    for fan_in, fan_out in zip(layer_dims, layer_dims[1:]):
        key, sub = jax.random.split(key)
        std = math.sqrt(2 / fan_in)
        params["W"].append(std * jax.random.normal(sub, shape=(fan_in, fan_out), dtype="float32"))
        params["b"].append(jnp.zeros(shape=(fan_out,), dtype="float32"))
    return params


def mlp_forward(params: dict, x: jax.Array) -> jax.Array:
    """Logits of the MLP.

    Args:
        params: `{"W": [...], "b": [...]}` as made by `init_params`.
        x: inputs, `(N, d_0)`.

    Returns:
        Logits, `(N, d_L)`.
    """
    layers = len(params["b"])
    out = x
    for idx, (w, c) in enumerate(zip(params["W"], params["b"])):
        out = jnp.matmul(out, w) + c
        out = out if idx == layers - 1 else jax.nn.relu(out)
    return out


def bce_loss(params: dict, x: jax.Array, y: jax.Array) -> jax.Array:
    """Mean binary cross-entropy on the first logit, computed stably.

    Args:
        params: the MLP parameters.
        x: inputs, `(N, d_0)`.
        y: 0/1 float labels, `(N,)`.

    Returns:
        A scalar `jax.Array`.
    """
    s = mlp_forward(params, x)[:, 0]
    return -jnp.mean(y * jax.nn.log_sigmoid(s) + (1 - y) * jax.nn.log_sigmoid(-s))


def accuracy(params: dict, x: jax.Array, y: jax.Array) -> float:
    """Fraction of rows where the sign of the first logit matches the label.

    Args:
        params: the MLP parameters.
        x: inputs, `(N, d_0)`.
        y: 0/1 labels, `(N,)`.

    Returns:
        A Python float in [0, 1].
    """
    s = mlp_forward(params, x)[:, 0]
    return float(jnp.mean((s > 0) == (y > 0.5)))
