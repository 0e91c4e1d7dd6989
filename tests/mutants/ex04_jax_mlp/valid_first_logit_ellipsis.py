# VALID: the first logit as logits[..., 0] in bce_loss and jnp.take(logits, 0, axis=-1) in accuracy
"""Exercise 04 — pure functions and pytrees (JAX: the trace).

Build the make_moons MLP again, in pure JAX. There is no module object here:
the parameters are an explicit pytree, a plain dict of lists of arrays,

    params = {"W": [W0, W1, ...], "b": [b0, b1, ...]},   W[i]: (d_i, d_{i+1}),  b[i]: (d_{i+1},)

and the model is a *pure function* `mlp_forward(params, x)`: its output
depends only on its arguments, it changes nothing outside itself.

Why pure? PyTorch (exercise 01) records a *tape* while your Python code runs
on real numbers, so any Python works. JAX instead *traces* your function:
`jax.jit`, `jax.grad` and `jax.vmap` call it once with abstract tracers
(shape and dtype, no values), record the operations into a jaxpr, and then
compile or transform that record. So inside these functions:
    - use `jax.numpy` (`jnp`) and `jax.nn`, never `numpy` on the inputs
      (`np.asarray(tracer)` fails under jit);
    - no Python `if`/`float()` on array values;
    - never modify the params dict or its lists (no `.pop()`, no item
      assignment), and do not read or write globals: a side effect runs once,
      at trace time, not at every call;
    - randomness comes from an explicit key: split it, one subkey per layer.

What to build:
    - `init_params(layer_dims, key)`: `W[i]` of shape `(d_i, d_{i+1})` drawn
      He-normal (mean 0, std `sqrt(2 / d_i)`; a plain normal scaled by the
      std, or `jax.nn.initializers.he_normal()`), float32; `b[i]` zeros;
      a distinct subkey per layer (`jax.random.split`); the same key gives
      the same params. Must work with `jax.random.PRNGKey(0)` and with the
      newer typed `jax.random.key(0)` (do not do arithmetic on keys).
    - `mlp_forward(params, x)`: `(N, d_0)` -> `(N, d_last)` logits, ReLU
      between layers, none after the last.
    - `bce_loss(params, x, y)`: `y` is `(N,)` of 0/1 floats; the mean of the
      stable binary cross-entropy `max(z, 0) - z*y + log(1 + exp(-|z|))` over
      `z = mlp_forward(params, x)[:, 0]`. It must stay finite and correct for
      |z| up to 1e4 (clipping probabilities is not enough).
    - `accuracy(params, x, y)`: the fraction of rows where
      `(z >= 0) == (y == 1)`, returned as a Python `float`.

Example:
    >>> params = init_params([2, 32, 32, 1], jax.random.PRNGKey(0))
    >>> [w.shape for w in params["W"]]
    [(2, 32), (32, 32), (32, 1)]
    >>> mlp_forward(params, jnp.zeros((5, 2))).shape
    (5, 1)
"""

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
    dims = [int(d) for d in layer_dims]
    keys = jax.random.split(key, len(dims) - 1)
    params: dict = {"W": [], "b": []}
    for k, d_in, d_out in zip(keys, dims[:-1], dims[1:]):
        w = jax.random.normal(k, (d_in, d_out), dtype=jnp.float32) * math.sqrt(2.0 / d_in)
        params["W"].append(w)
        params["b"].append(jnp.zeros((d_out,), dtype=jnp.float32))
    return params


def mlp_forward(params: dict, x: jax.Array) -> jax.Array:
    """Logits of the MLP.

    Args:
        params: `{"W": [...], "b": [...]}` as made by `init_params`.
        x: inputs, `(N, d_0)`.

    Returns:
        Logits, `(N, d_L)`.
    """
    h = x
    for w, b in zip(params["W"][:-1], params["b"][:-1]):
        h = jax.nn.relu(h @ w + b)
    return h @ params["W"][-1] + params["b"][-1]


def bce_loss(params: dict, x: jax.Array, y: jax.Array) -> jax.Array:
    """Mean binary cross-entropy on the first logit, computed stably.

    Args:
        params: the MLP parameters.
        x: inputs, `(N, d_0)`.
        y: 0/1 float labels, `(N,)`.

    Returns:
        A scalar `jax.Array`.
    """
    z = mlp_forward(params, x)[..., 0]
    return jnp.mean(jnp.maximum(z, 0.0) - z * y + jnp.log1p(jnp.exp(-jnp.abs(z))))


def accuracy(params: dict, x: jax.Array, y: jax.Array) -> float:
    """Fraction of rows where the sign of the first logit matches the label.

    Args:
        params: the MLP parameters.
        x: inputs, `(N, d_0)`.
        y: 0/1 labels, `(N,)`.

    Returns:
        A Python float in [0, 1].
    """
    z = jnp.take(mlp_forward(params, x), 0, axis=-1)
    return float(jnp.mean((z >= 0) == (y == 1)))
