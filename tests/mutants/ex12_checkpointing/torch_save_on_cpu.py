# MUTANT: applies the blocks plainly under torch.autograd.graph.save_on_cpu (right values, nothing recomputed,
#   everything saved, only elsewhere: its hooks hid the saved tensors from the probe's count)
# FAILS: torch_ckpt_recomputes_each_block, torch_ckpt_saves_fewer
# CODE torch_ckpt_recomputes_each_block: EX12_TORCH_NO_RECOMPUTE
# CODE torch_ckpt_saves_fewer: EX12_TORCH_OWN_HOOKS
"""Exercise 12 — gradient checkpointing: trading memory for recomputation, in both frameworks.

To differentiate, both frameworks keep values of the forward pass for the
backward pass: PyTorch *saves tensors* on the tape (each node keeps what its
backward needs), JAX *saves residuals* when it splits the trace into a
forward and a backward part. For a deep network those saved values are most
of the memory of training. Checkpointing (rematerialisation) keeps only each
block's input and recomputes the inside of the block during the backward
pass: less memory, one more forward pass of compute.
    - JAX: `jax.checkpoint(f)` (alias `jax.remat`) marks `f`: the jaxpr of
      the gradient then holds a checkpoint equation (its primitive is named
      `remat`/`checkpoint`, depending on the JAX version) whose body is
      recomputed in the backward pass.
      `jax.ad_checkpoint.print_saved_residuals(f, *args)` prints one line per
      residual JAX saves to differentiate `f` at `args`.
    - PyTorch: `torch.utils.checkpoint.checkpoint(block, h,
      use_reentrant=False)` runs `block` without saving its insides and runs
      it again when the backward pass needs them.
      `torch.autograd.graph.saved_tensors_hooks(pack, unpack)` calls
      `pack(tensor)` for every tensor autograd saves while the context is
      active (and `unpack` when backward reads it back).
Checkpoint *each block*: one checkpoint around the whole network saves less
still, but its backward pass recomputes the whole network and holds all of
its values at once, which is what checkpointing was meant to avoid.

What to build:
    - `checkpointed_mlp_forward(params, x)`: exercise 04's `mlp_forward`
      (`params = {"W": [...], "b": [...]}`, `W[i]` of shape
      `(d_i, d_{i+1})`, ReLU between layers, logits out, `(N, d_last)`) with
      each layer (affine map, plus its ReLU for the hidden ones) wrapped in
      `jax.checkpoint`. Same values and gradients as `mlp_forward`; pure and
      jit-able; the gradient's jaxpr holds one checkpoint equation per
      layer, and it saves fewer residuals than `mlp_forward` for 3 or more
      layers.
    - `saved_residual_count(f, *args)`: how many residuals JAX saves to
      differentiate `f` at `args`: the number of entries
      `jax.ad_checkpoint.print_saved_residuals(f, *args)` lists (it prints
      them: capture what it prints with `contextlib.redirect_stdout`).
    - `torch_checkpointed(blocks, x)`: applies the blocks (a sequence of
      `nn.Module`) in order, each through
      `torch.utils.checkpoint.checkpoint(block, h, use_reentrant=False)`.
      Same output and parameter gradients as applying them plainly, fewer
      tensors saved for backward. (`use_reentrant=True`, the old default,
      loses the gradients when the input does not require grad.)
    - `torch_saved_tensor_count(fn)`: calls `fn()` (which builds a graph and
      returns a tensor) under `saved_tensors_hooks` and returns how many
      tensors autograd packed, as a Python int. The hooks must hand every
      tensor back unchanged: the graph `fn` built must still run backward.

Example:
    >>> saved_residual_count(lambda x: jnp.sin(jnp.cos(x)), jnp.ones(3))
    2
    >>> saved_residual_count(jax.checkpoint(lambda x: jnp.sin(jnp.cos(x))), jnp.ones(3))
    1
    >>> a = torch.ones(3, requires_grad=True)
    >>> torch_saved_tensor_count(lambda: (a * a).sum())
    2
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import jax
import torch
from torch import Tensor, nn


def checkpointed_mlp_forward(params: dict, x: jax.Array) -> jax.Array:
    """The MLP's logits, each layer wrapped in ``jax.checkpoint``.

    Args:
        params: ``{"W": [W0, W1, ...], "b": [b0, b1, ...]}``, ``W[i]`` of shape ``(d_i, d_{i+1})``.
        x: inputs, ``(N, d_0)``.

    Returns:
        Logits, ``(N, d_last)``.
    """
    @jax.checkpoint
    def hidden(h, w, b):
        return jax.nn.relu(h @ w + b)

    @jax.checkpoint
    def output(h, w, b):
        return h @ w + b

    n = len(params["W"])
    h = x
    for i in range(n):
        layer = output if i == n - 1 else hidden
        h = layer(h, params["W"][i], params["b"][i])
    return h


def saved_residual_count(f: Callable, *args) -> int:
    """The number of residuals JAX saves to differentiate ``f`` at ``args``.

    Args:
        f: a function of arrays (pytrees of arrays) with array outputs.
        *args: its arguments.

    Returns:
        How many entries ``jax.ad_checkpoint.print_saved_residuals(f, *args)`` lists.
    """
    import contextlib
    import io

    from jax.ad_checkpoint import print_saved_residuals

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print_saved_residuals(f, *args)
    return sum(1 for line in buf.getvalue().splitlines() if line.strip())


def torch_checkpointed(blocks: Sequence[nn.Module], x: Tensor) -> Tensor:
    """Applies ``blocks`` in order, each one checkpointed.

    Args:
        blocks: the modules, applied as ``h = block(h)``.
        x: the input.

    Returns:
        The last block's output, on the tape.
    """
    h = x
    with torch.autograd.graph.save_on_cpu():  # "saves memory": moves what autograd keeps, keeps all of it
        for block in blocks:
            h = block(h)
    return h


def torch_saved_tensor_count(fn: Callable[[], Tensor]) -> int:
    """How many tensors autograd saves for backward while ``fn()`` runs.

    Args:
        fn: builds a graph and returns a tensor.

    Returns:
        The number of tensors packed by ``saved_tensors_hooks`` during the call.
    """
    count = 0

    def pack(t: Tensor) -> Tensor:
        nonlocal count
        count += 1
        return t

    def unpack(t: Tensor) -> Tensor:
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        fn()
    return count
