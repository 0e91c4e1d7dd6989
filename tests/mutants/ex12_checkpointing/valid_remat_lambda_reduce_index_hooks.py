# VALID: jax.remat of fresh lambdas per layer; residuals counted from the printed lines (0 when none);
#   torch blocks chained with functools.reduce (preserve_rng_state=False); saved tensors kept in a list (pack
#   returns an index)
import contextlib
import io
from functools import reduce

import jax
import jax.numpy as jnp
import torch
import torch.utils.checkpoint as cp
from jax.ad_checkpoint import print_saved_residuals


def _dense(h, w, b):
    return jnp.dot(h, w) + b


def checkpointed_mlp_forward(params, x):
    h = x
    n_layers = len(params["W"])
    for i, (w, b) in enumerate(zip(params["W"], params["b"])):
        if i < n_layers - 1:
            h = jax.remat(lambda h, w, b: jax.nn.relu(_dense(h, w, b)))(h, w, b)
        else:
            h = jax.remat(_dense)(h, w, b)
    return h


def saved_residual_count(f, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_saved_residuals(f, *args)
    text = out.getvalue().strip()
    return len(text.split("\n")) if text else 0


def torch_checkpointed(blocks, x):
    return reduce(lambda h, blk: cp.checkpoint(blk, h, use_reentrant=False, preserve_rng_state=False), blocks, x)


def torch_saved_tensor_count(fn):
    saved = []

    def pack_hook(t):
        saved.append(t)
        return len(saved) - 1

    def unpack_hook(i):
        return saved[i]

    with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        fn()
    return len(saved)
