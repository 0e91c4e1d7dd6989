# MUTANT: right values, but computed with jax.jacobian (another name of reverse-mode autodiff)
# FAILS: manual_grads_without_autograd
# CODE manual_grads_without_autograd: EX09_USED_AUTOGRAD
"""Exercise 09 — the PyTorch tape.

While a forward pass runs, PyTorch autograd records every operation on a
*tape*: each result tensor gets a `grad_fn`, a node of the backward graph,
and `grad_fn.next_functions` points to the nodes that produced its inputs.
`loss.backward()` walks that graph from the loss back to the leaves, where
`AccumulateGrad` nodes add the gradient into `leaf.grad`. The graph is built
anew on every forward pass and freed after `backward()`. (JAX keeps no tape:
`jax.grad` traces your function into a jaxpr and differentiates the trace,
exercise 08.)

Part 1 — `backward_graph(t)`: list what is on the tape.
    - Return the class names (`type(node).__name__`) of the nodes reachable
      from `t.grad_fn`, in depth-first pre-order: a node, then each of its
      children in `next_functions` order (each entry is a pair
      `(node, input_nr)`; the node may be `None` for an input that needs no
      gradient: skip it).
    - Each node appears once, even when it is reachable along several paths
      (a shared subexpression, a leaf used twice): remember the nodes you
      have visited — the node objects, not their names.
    - `AccumulateGrad` nodes (one per leaf that requires grad) are included.
    - A tensor without `grad_fn` (a leaf, or a result computed under
      `torch.no_grad()`) gives `[]`.
    - Repeated calls give the same answer: keep no state between calls.
      Careful with `def walk(node, visited=set())`: a default argument is
      created once, when `def` runs, and shared by every later call.

Part 2 — `manual_grads(w, x, b)`: do the backward pass by hand.
    - For `L = (w*x + b)**2`, return `(dL/dw, dL/dx, dL/db)` as a tuple of
      three Python floats, computed from the closed form with the chain rule.
      Do not use autograd (no `backward`, `torch.autograd.grad`, `jax.grad`,
      no tensor with `requires_grad=True`) inside this function.
    - The seed's Figure 2 labels dL/dw as 2.6 at (w, x, b) = (0.5, 2.0, 0.3);
      the example below says 5.2. Before trusting any hand derivation (the
      figure's or yours), check it against autograd in a scratch cell, not
      inside `manual_grads`:
          w = torch.tensor(0.5, requires_grad=True)
          L = (w * 2.0 + 0.3) ** 2
          L.backward(); w.grad
      then find the factor the figure forgot. The grader evaluates your
      formulas at random points, so the example's numbers alone earn nothing.

Example:
    >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> backward_graph((w * 3.0).sum())
    ['SumBackward0', 'MulBackward0', 'AccumulateGrad']
    >>> manual_grads(0.5, 2.0, 0.3)
    (5.2, 1.3, 2.6)
"""

from __future__ import annotations

import torch


def backward_graph(t: torch.Tensor) -> list[str]:
    """Names of the backward-graph nodes reachable from ``t.grad_fn``.

    Args:
        t: any tensor.

    Returns:
        ``type(node).__name__`` of each node, depth-first pre-order, children in
        ``next_functions`` order, each node once; ``[]`` when ``t.grad_fn`` is None.
    """
    names: list[str] = []
    visited: set = set()
    stack = [t.grad_fn] if t.grad_fn is not None else []
    while stack:
        node = stack.pop()
        if node in visited:
            continue
        visited.add(node)
        names.append(type(node).__name__)
        children = [child for child, _ in node.next_functions if child is not None]
        stack.extend(reversed(children))
    return names


def manual_grads(w: float, x: float, b: float) -> tuple[float, float, float]:
    """Gradients of ``L = (w*x + b)**2`` in closed form, without autograd.

    Args:
        w: weight.
        x: input.
        b: bias.

    Returns:
        ``(dL/dw, dL/dx, dL/db)`` as Python floats.
    """
    import jax

    dw, dx, db = jax.jacobian(lambda w_, x_, b_: (w_ * x_ + b_) ** 2, argnums=(0, 1, 2))(w, x, b)
    return float(dw), float(dx), float(db)
