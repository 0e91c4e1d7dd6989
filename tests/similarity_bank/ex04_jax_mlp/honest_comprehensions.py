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
    dims = list(layer_dims)
    ks = jax.random.split(key, len(dims))
    Ws = [jax.random.normal(ks[j], (dims[j], dims[j + 1])).astype(jnp.float32) * math.sqrt(2.0 / dims[j])
          for j in range(len(dims) - 1)]
    bs = [jnp.zeros(dims[j + 1], jnp.float32) for j in range(len(dims) - 1)]
    return dict(W=Ws, b=bs)


def mlp_forward(params: dict, x: jax.Array) -> jax.Array:
    """Logits of the MLP.

    Args:
        params: `{"W": [...], "b": [...]}` as made by `init_params`.
        x: inputs, `(N, d_0)`.

    Returns:
        Logits, `(N, d_L)`.
    """
    *hidden, last = list(zip(params["W"], params["b"]))
    for w, bias in hidden:
        x = jnp.maximum(jnp.dot(x, w) + bias, 0.0)
    w, bias = last
    return jnp.dot(x, w) + bias


def bce_loss(params: dict, x: jax.Array, y: jax.Array) -> jax.Array:
    """Mean binary cross-entropy on the first logit, computed stably.

    Args:
        params: the MLP parameters.
        x: inputs, `(N, d_0)`.
        y: 0/1 float labels, `(N,)`.

    Returns:
        A scalar `jax.Array`.
    """
    logits = mlp_forward(params, x)[..., 0]
    return jnp.mean(jax.nn.softplus(logits) - y * logits)


def accuracy(params: dict, x: jax.Array, y: jax.Array) -> float:
    """Fraction of rows where the sign of the first logit matches the label.

    Args:
        params: the MLP parameters.
        x: inputs, `(N, d_0)`.
        y: 0/1 labels, `(N,)`.

    Returns:
        A Python float in [0, 1].
    """
    logits = mlp_forward(params, x)[..., 0]
    correct = jnp.where(logits > 0, 1.0, 0.0) == y
    return float(correct.sum() / correct.shape[0])
