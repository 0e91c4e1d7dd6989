"""ex04: other valid ways to write the exercise get full marks (no false fails on style)."""

from __future__ import annotations

import pytest
from conftest import make_submission

EX = "ex04_jax_mlp"

# he_normal's truncated normal, key split in a loop, jnp.dot/jnp.maximum, optax's BCE, numpy accuracy.
VARIANT_HE_NORMAL = '''
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
'''

# fold_in per layer, tuples instead of lists, logaddexp BCE, .item() accuracy.
VARIANT_FOLD_IN = '''
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
'''


@pytest.mark.parametrize("source", [VARIANT_HE_NORMAL, VARIANT_FOLD_IN], ids=["he_normal", "fold_in"])
def test_valid_variant_gets_full_marks(run, tmp_path, source):
    sub = make_submission(tmp_path / "sub", {EX: source}, only=[EX])
    res = run.grade([str(sub)], only=[EX])[0]["exercises"][EX]
    failed = {t["name"]: t["message"] for t in res["tests"] if not t["passed"]}
    assert not failed, failed
