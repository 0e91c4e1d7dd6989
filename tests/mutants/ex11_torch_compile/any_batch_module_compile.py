# MUTANT: model.compile(backend=backend, dynamic=True) in place, then returns the model: nn.Module.compile captures no graph on an nn.Sequential in this torch
# FAILS: any_batch_compiles_once
# CODE any_batch_compiles_once: EX11_ANY_BATCH_MODULE_COMPILE
"""Exercise 11 — PyTorch's own trace: graph capture, graph breaks, recompiles.

`torch.compile` is PyTorch's opt-in answer to `jax.jit` (exercise 05). Its
front end, TorchDynamo, reads your function's Python bytecode as it runs and
*captures* the tensor operations into an FX graph, which a backend compiles
("inductor" by default; "eager" runs the captured graph as it is, and
"aot_eager" also traces the backward pass ahead of time). The differences
with JAX's trace are the lesson:
    - where Dynamo cannot follow (a Python `if` on a tensor's value, `.item()`,
      a `print`), it does not fail: it ends the graph, runs that bit in
      ordinary Python and starts a new graph after it — a *graph break*.
      `fullgraph=True` turns a graph break into an error;
    - each compiled graph is guarded by the facts it assumed (shapes, dtypes,
      Python values); a call that breaks a guard *recompiles*. By default a
      new batch size compiles once more with a dynamic batch axis
      ("automatic dynamic"); `dynamic=True` (or `torch._dynamo.mark_dynamic`)
      asks for dynamic shapes from the first compile;
    - the tape still works: the compiled forward is recorded on the tape
      (with "aot_eager" or "inductor" as one node per graph, whose backward
      was traced ahead of time), and `loss.backward()` runs through it.
The grader passes `backend="eager"` or `backend="aot_eager"` (the default
inductor needs a C++ compiler and seconds per graph): always use the
`backend` you are given.

What to build:
    - `clip_by_norm(x, max_norm)`: `x * min(1, max_norm / ||x||)`, with the L2
      norm over *all* elements of `x` (`x` of zeros gives zeros); a
      differentiable tensor of `x`'s shape. Write it without a Python branch
      on a tensor value (a Python `if x.norm() > max_norm:` is a graph
      break), so that `torch.compile(clip_by_norm, fullgraph=True,
      backend="eager")` accepts it; and keep the scale a tensor (`.item()` or
      `float(...)` turn it into a constant the tape cannot differentiate).
    - `graph_report(fn, *args)`: `(graph_count, graph_break_count)` of
      `torch._dynamo.explain(fn)(*args)`, as a tuple of two Python ints.
    - `compile_for_any_batch(model, backend)`: a compiled version of `model`
      (same outputs as `model(x)`) that compiles at most once over any
      sequence of batch sizes (larger than the input width: Dynamo treats
      sizes 0 and 1, and a batch size equal to another size of the input,
      specially): dynamic shapes from the first call.
      The default automatic dynamic compiles a second time at the second
      batch size, and loses that check.
    - `compiled_train_step(model, optimizer, loss_fn, backend)`: returns
      `step(x, y) -> float` that does what exercise 02's `train_step` does
      (`model.train()`, zero the gradients, forward, `loss_fn(model(x), y)`,
      `backward()`, `optimizer.step()` with the gradients unclipped, return
      the loss before the update as a Python float), with the forward and the
      loss computed by one function
      compiled with `torch.compile(..., backend=backend)`. Compile it once, in
      `compiled_train_step`, not inside `step`: repeated calls with the same
      shapes capture no new graph and call `torch.compile` no more. After 3
      steps the parameters match those of the eager `train_step`. It works
      with any `torch.optim` optimizer (SGD, AdamW, ...), also when
      gradients are already on the parameters (left by an earlier
      `backward()`).

Example:
    >>> x = torch.full((2, 2), 3.0)
    >>> clip_by_norm(x, 1.5)
    tensor([[0.7500, 0.7500],
            [0.7500, 0.7500]])
    >>> graph_report(clip_by_norm, x, 1.5)
    (1, 0)
    >>> step = compiled_train_step(model, torch.optim.SGD(model.parameters(), lr=0.1),
    ...                            torch.nn.functional.mse_loss, backend="eager")
    >>> loss = step(x, y)   # captures the graph; later calls reuse it
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn


def clip_by_norm(x: Tensor, max_norm: float) -> Tensor:
    """Scales ``x`` down so that its global L2 norm is at most ``max_norm``.

    Differentiable everywhere, ``x = 0`` included: wherever ``||x|| < max_norm``
    the function is the identity, so its gradient there (at zero too) is the
    incoming gradient, unchanged and finite. A form that divides by ``||x||``,
    takes the square root of a sum of squares, or picks a branch with
    ``torch.where`` (which differentiates both branches) gives a nan gradient
    at zero even where its value is right.

    Args:
        x: a tensor of any shape.
        max_norm: the largest norm allowed (> 0).

    Returns:
        ``x * min(1, max_norm / ||x||)``, same shape as ``x``; zeros stay zeros.
    """
    norm = torch.linalg.vector_norm(x)
    # max_norm / max(norm, max_norm) == min(1, max_norm / norm), finite (and differentiable) at norm 0
    return x * (max_norm / torch.clamp(norm, min=max_norm))


def graph_report(fn: Callable, *args) -> tuple[int, int]:
    """How TorchDynamo captures ``fn`` on ``args``.

    Args:
        fn: a function of tensors.
        *args: its arguments.

    Returns:
        ``(graph_count, graph_break_count)`` as ``torch._dynamo.explain`` reports them.
    """
    report = torch._dynamo.explain(fn)(*args)
    return int(report.graph_count), int(report.graph_break_count)


def compile_for_any_batch(model: nn.Module, backend: str = "inductor") -> Callable[[Tensor], Tensor]:
    """``model`` compiled once for every batch size.

    Args:
        model: a module taking ``(N, ...)`` batches.
        backend: the ``torch.compile`` backend to use.

    Returns:
        A callable with ``model``'s outputs that compiles at most once over batch sizes
        larger than the input width.
    """
    model.compile(backend=backend, dynamic=True)  # nn.Module.compile: in place
    return model


def compiled_train_step(model: nn.Module, optimizer: torch.optim.Optimizer, loss_fn: Callable,
                        backend: str = "inductor") -> Callable[[Tensor, Tensor], float]:
    """Exercise 02's ``train_step`` with the forward and the loss compiled.

    Args:
        model: the module to train (in place).
        optimizer: an optimizer over ``model.parameters()``.
        loss_fn: ``loss_fn(output, target) -> scalar tensor``.
        backend: the ``torch.compile`` backend to use.

    Returns:
        ``step(x, y) -> float``: one training step; the loss before the update.
    """
    @torch.compile(backend=backend)
    def forward_loss(x: Tensor, y: Tensor) -> Tensor:
        return loss_fn(model(x), y)

    def step(x: Tensor, y: Tensor) -> float:
        model.train()
        optimizer.zero_grad()
        loss = forward_loss(x, y)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step
