"""ex12: other valid ways to write the exercise get full marks (no false fails on style)."""

from __future__ import annotations

import pytest
from conftest import make_submission

EX = "ex12_checkpointing"

# jax.remat (the alias) on closures over each layer's weights, with an explicit policy
# (nothing_saveable, the default); residuals counted with splitlines on the stripped text;
# checkpoint through functools.partial with preserve_rng_state=False; saved tensors kept in a
# list, pack returning an index that unpack looks up.
VARIANT_REMAT_POLICY = '''
import contextlib
import functools
import io

import jax
import torch
from jax.ad_checkpoint import print_saved_residuals
from torch.utils.checkpoint import checkpoint


def checkpointed_mlp_forward(params, x):
    h = x
    last = len(params["W"]) - 1
    for i, (w, b) in enumerate(zip(params["W"], params["b"])):
        def layer(h, w=w, b=b, relu=i < last):
            z = jax.numpy.dot(h, w) + b
            return jax.nn.relu(z) if relu else z

        h = jax.remat(layer, policy=jax.checkpoint_policies.nothing_saveable)(h)
    return h


def saved_residual_count(f, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_saved_residuals(f, *args)
    text = out.getvalue().strip()
    return len(text.splitlines()) if text else 0


def torch_checkpointed(blocks, x):
    run = functools.partial(checkpoint, use_reentrant=False, preserve_rng_state=False)
    for block in blocks:
        x = run(block, x)
    return x


def torch_saved_tensor_count(fn):
    stored = []

    def pack(t):
        stored.append(t)
        return len(stored) - 1

    def unpack(i):
        return stored[i]

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        fn()
    return len(stored)
'''

# One layer function with a static flag, checkpointed with static_argnums; the forward itself jitted;
# residuals counted with a sum over lines; checkpoint of a lambda per block; the count kept on an
# object whose method is the pack hook.
VARIANT_STATIC_ARGNUMS = '''
import contextlib
import io
from functools import partial

import jax
import jax.numpy as jnp
import torch
import torch.utils.checkpoint


@partial(jax.checkpoint, static_argnums=(3,))
def _layer(h, w, b, hidden):
    z = h @ w + b
    return jnp.maximum(z, 0.0) if hidden else z


@jax.jit
def checkpointed_mlp_forward(params, x):
    n = len(params["W"])
    for i in range(n):
        x = _layer(x, params["W"][i], params["b"][i], i < n - 1)
    return x


def saved_residual_count(f, *args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        jax.ad_checkpoint.print_saved_residuals(f, *args)
    return sum(1 for line in buf.getvalue().split("\\n") if line)


def torch_checkpointed(blocks, x):
    h = x
    for block in list(blocks):
        h = torch.utils.checkpoint.checkpoint(lambda t, blk=block: blk(t), h, use_reentrant=False)
    return h


class _Counter:
    def __init__(self):
        self.n = 0

    def pack(self, t):
        self.n += 1
        return t

    def unpack(self, t):
        return t


def torch_saved_tensor_count(fn):
    c = _Counter()
    with torch.autograd.graph.saved_tensors_hooks(c.pack, c.unpack):
        fn()
    return int(c.n)
'''

VARIANTS = {"remat_policy": VARIANT_REMAT_POLICY, "static_argnums": VARIANT_STATIC_ARGNUMS}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_valid_variant_gets_full_marks(run, tmp_path, name):
    sub = make_submission(tmp_path / "sub", {EX: VARIANTS[name]}, only=[EX])
    res = run.grade([str(sub)], only=[EX])[0]["exercises"][EX]
    failed = {t["name"]: t["message"] for t in res["tests"] if not t["passed"]}
    assert not failed, failed
