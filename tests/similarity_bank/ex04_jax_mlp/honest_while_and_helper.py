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
    n_layers = len(layer_dims) - 1
    subkeys = list(jax.random.split(key, n_layers))
    weights = []
    biases = []
    i = 0
    while i < n_layers:
        scale = math.sqrt(2.0 / layer_dims[i])
        draw = jax.random.normal(subkeys[i], (layer_dims[i], layer_dims[i + 1]))
        weights.append((scale * draw).astype(jnp.float32))
        biases.append(jnp.zeros((layer_dims[i + 1],)).astype(jnp.float32))
        i += 1
    return {"b": biases, "W": weights}


def mlp_forward(params: dict, x: jax.Array) -> jax.Array:
    """Logits of the MLP.

    Args:
        params: `{"W": [...], "b": [...]}` as made by `init_params`.
        x: inputs, `(N, d_0)`.

    Returns:
        Logits, `(N, d_L)`.
    """
    def layer(h, wb, last):
        h = h @ wb[0] + wb[1]
        return h if last else jax.nn.relu(h)

    pairs = list(zip(params["W"], params["b"]))
    for k, wb in enumerate(pairs):
        x = layer(x, wb, k == len(pairs) - 1)
    return x


def bce_loss(params: dict, x: jax.Array, y: jax.Array) -> jax.Array:
    """Mean binary cross-entropy on the first logit, computed stably.

    Args:
        params: the MLP parameters.
        x: inputs, `(N, d_0)`.
        y: 0/1 float labels, `(N,)`.

    Returns:
        A scalar `jax.Array`.
    """
    logit = mlp_forward(params, x)[:, 0]
    loss = jnp.clip(logit, 0, None) - logit * y + jnp.log(1 + jnp.exp(-jnp.abs(logit)))
    return jnp.sum(loss) / y.shape[0]


def accuracy(params: dict, x: jax.Array, y: jax.Array) -> float:
    """Fraction of rows where the sign of the first logit matches the label.

    Args:
        params: the MLP parameters.
        x: inputs, `(N, d_0)`.
        y: 0/1 labels, `(N,)`.

    Returns:
        A Python float in [0, 1].
    """
    logit = mlp_forward(params, x)[:, 0]
    preds = jnp.sign(logit) > 0
    hits = jnp.count_nonzero(preds == y.astype(bool))
    return float(hits) / len(y)
