# MUTANT: calls the model on one example without its batch axis (`model(xi)`, `loss_fn(out, yi)` inside vmap): right for a model that accepts unbatched input, an error for one that takes batches only
# FAILS: torch_per_example_grads_match_reference, torch_leaves_model_untouched, torch_vectorised
# CODE torch_per_example_grads_match_reference: EX06_TORCH_UNBATCHED
# CODE torch_leaves_model_untouched: EX06_TORCH_UNBATCHED
# CODE torch_vectorised: EX06_TORCH_UNBATCHED
"""Exercise 06 — per-example gradients with `vmap` (JAX: the trace; PyTorch: torch.func).

`jax.grad(loss_fn)(params, x, y)` gives the gradient of the *batch* loss.
Differential privacy (DP-SGD) and many diagnostics need one gradient *per
example* instead. In JAX you write the gradient for ONE example and let
`jax.vmap` turn it into a batched function: vmap is a transformation of the
trace, so the jaxpr of your function is the same size for 2 examples or
2000 — no loop runs, the batch is just a leading axis on every array. A
Python `for` loop gives the same numbers but unrolls N copies into the
trace; `jax.lax.map` keeps one copy but is a `scan` that runs the examples
one after another. Both lose the vectorisation check.

PyTorch's tape records one backward pass per `.backward()` call, so the
naive per-example loop calls `.backward()` N times. `torch.func` brings the
JAX style to PyTorch: `functional_call(model, params, (x,))` runs the model
as a pure function of a params dict, `torch.func.grad` differentiates it
without touching `.grad`, and `torch.func.vmap` batches it.

What to build:
    - `per_example_grads(loss_fn, params, x, y)`: `loss_fn(params, xb, yb)`
      is a scalar batch loss (e.g. `bce_loss` of exercise 04). Return a
      pytree shaped like `params` whose leaves have a leading axis N, where
      entry i is `jax.grad(loss_fn)(params, x[i:i+1], y[i:i+1])`. Use
      `jax.vmap` (no Python loop, no `lax.map`/`scan`/`fori_loop`); keep it
      pure: no globals, no caching between calls, do not modify `params`;
      it must also work inside `jax.jit`.
    - `clip_and_average(per_example, max_norm)`: per-example gradients as
      returned above (any pytree, leaves `(N, ...)`). For each example i,
      `norm_i` is the global L2 norm over ALL its leaves; scale example i by
      `1 / max(1, norm_i / max_norm)` (so norms above `max_norm` shrink to
      `max_norm`, smaller ones are left alone); return the mean over the
      examples, a pytree shaped like one example's gradient.
    - `torch_per_example_grads(model, loss_fn, x, y)`: `loss_fn(out, target)`
      is a scalar batch loss. Return `{name: tensor of shape (N, *p.shape)}`
      for `name, p in model.named_parameters()`, entry i the gradient of
      `loss_fn(model(x[i:i+1]), y[i:i+1])`. Use `torch.func.functional_call`,
      `torch.func.grad` and `torch.func.vmap` (the model runs once on the
      batch, not N times). Leave the model's parameters and their `.grad`
      untouched.

Example:
    >>> g = per_example_grads(bce_loss, params, x, y)   # x: (N, d)
    >>> [w.shape for w in g["W"]]
    [(N, 2, 32), (N, 32, 32), (N, 32, 1)]
    >>> clip_and_average(g, 1.0)["W"][0].shape
    (2, 32)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import torch
from torch import Tensor
from torch.func import functional_call, grad, vmap


def per_example_grads(loss_fn: Callable[..., jax.Array], params: Any, x: jax.Array, y: jax.Array) -> Any:
    """Gradients of `loss_fn` for each example separately, vectorised with `jax.vmap`.

    Args:
        loss_fn: `loss_fn(params, xb, yb) -> scalar`, xb of shape `(B, ...)`.
        params: a pytree of arrays.
        x: inputs, shape `(N, ...)`.
        y: targets, shape `(N, ...)`.

    Returns:
        A pytree shaped like `params`; each leaf has shape `(N, *leaf.shape)`.
    """
    def one_example(p: Any, xi: jax.Array, yi: jax.Array) -> Any:
        return jax.grad(loss_fn)(p, xi[None], yi[None])

    return jax.vmap(one_example, in_axes=(None, 0, 0))(params, x, y)


def clip_and_average(per_example: Any, max_norm: float) -> Any:
    """Clips each example's gradient to global L2 norm `max_norm`, then averages.

    Args:
        per_example: a pytree whose leaves have shape `(N, ...)`.
        max_norm: the largest allowed per-example norm (> 0).

    Returns:
        A pytree shaped like one example: the mean over N of the clipped gradients.
    """
    leaves = jax.tree.leaves(per_example)
    n = leaves[0].shape[0]
    sq = sum(jnp.sum(jnp.reshape(leaf, (n, -1)) ** 2, axis=1) for leaf in leaves)
    scale = 1.0 / jnp.maximum(1.0, jnp.sqrt(sq) / max_norm)

    def clip_mean(leaf: jax.Array) -> jax.Array:
        return jnp.mean(leaf * jnp.reshape(scale, (n,) + (1,) * (leaf.ndim - 1)), axis=0)

    return jax.tree.map(clip_mean, per_example)


def torch_per_example_grads(model: torch.nn.Module, loss_fn: Callable[[Tensor, Tensor], Tensor],
                            x: Tensor, y: Tensor) -> dict[str, Tensor]:
    """Per-example gradients of a torch model with `torch.func`.

    Args:
        model: any `nn.Module` (it may hold buffers too); its parameters and `.grad` are left untouched.
        loss_fn: `loss_fn(out, target) -> scalar` over a batch.
        x: inputs, shape `(N, ...)`.
        y: targets, shape `(N, ...)`.

    Returns:
        `{name: (N, *param.shape)}` for every `model.named_parameters()` name.
    """
    params = {name: p.detach() for name, p in model.named_parameters()}
    buffers = {name: b.detach() for name, b in model.named_buffers()}

    def one_example(p: dict[str, Tensor], xi: Tensor, yi: Tensor) -> Tensor:
        out = functional_call(model, (p, buffers), (xi,))
        return loss_fn(out, yi)

    return vmap(grad(one_example), in_dims=(None, 0, 0))(params, x, y)
