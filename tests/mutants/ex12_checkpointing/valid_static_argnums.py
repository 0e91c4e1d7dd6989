# VALID: One layer function with a static flag, checkpointed with static_argnums; the forward itself jitted;
#   residuals counted with a sum over lines; checkpoint of a lambda per block; the count kept on an object whose
#   method is the pack hook.
# (expected: full marks; was a case of tests/test_ex12_checkpointing_extra.py)
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
    return sum(1 for line in buf.getvalue().split("\n") if line)


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
