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
    keys = jax.random.split(key, len(layer_dims) - 1)
    W, b = [], []
    for k, d_in, d_out in zip(keys, layer_dims[:-1], layer_dims[1:]):
        W.append(jax.random.normal(k, (d_in, d_out), dtype=jnp.float32) * math.sqrt(2.0 / d_in))
        b.append(jnp.zeros((d_out,), dtype=jnp.float32))
    return {"W": W, "b": b}


def mlp_forward(params: dict, x: jax.Array) -> jax.Array:
    """Logits of the MLP.

    Args:
        params: `{"W": [...], "b": [...]}` as made by `init_params`.
        x: inputs, `(N, d_0)`.

    Returns:
        Logits, `(N, d_L)`.
    """
    h = x
    n = len(params["W"])
    for i in range(n):
        h = h @ params["W"][i] + params["b"][i]
        if i < n - 1:
            h = jax.nn.relu(h)
    return h


def bce_loss(params: dict, x: jax.Array, y: jax.Array) -> jax.Array:
    """Mean binary cross-entropy on the first logit, computed stably.

    Args:
        params: the MLP parameters.
        x: inputs, `(N, d_0)`.
        y: 0/1 float labels, `(N,)`.

    Returns:
        A scalar `jax.Array`.
    """
    z = mlp_forward(params, x)[:, 0]
    per = jnp.maximum(z, 0) - z * y + jnp.log1p(jnp.exp(-jnp.abs(z)))
    return per.mean()


def accuracy(params: dict, x: jax.Array, y: jax.Array) -> float:
    """Fraction of rows where the sign of the first logit matches the label.

    Args:
        params: the MLP parameters.
        x: inputs, `(N, d_0)`.
        y: 0/1 labels, `(N,)`.

    Returns:
        A Python float in [0, 1].
    """
    z = mlp_forward(params, x)[:, 0]
    pred = (z > 0).astype(jnp.float32)
    return float(jnp.mean(pred == y))
