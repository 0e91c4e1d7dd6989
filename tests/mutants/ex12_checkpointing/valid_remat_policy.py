# VALID: jax.remat (the alias) on closures over each layer's weights, with an explicit policy (nothing_saveable,
#   the default); residuals counted with splitlines on the stripped text; checkpoint through functools.partial
#   with preserve_rng_state=False; saved tensors kept in a list, pack returning an index that unpack looks up.
# (expected: full marks; was a case of tests/test_ex12_checkpointing_extra.py)
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
