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
    if t.grad_fn is None:
        return []
    out, done, todo = [], set(), [t.grad_fn]
    while len(todo) > 0:
        fn = todo.pop()
        if fn in done:
            continue
        done.add(fn)
        out.append(fn.__class__.__name__)
        todo += [c for c, _ in reversed(fn.next_functions) if c is not None]
    return out


def manual_grads(w: float, x: float, b: float) -> tuple[float, float, float]:
    """Gradients of ``L = (w*x + b)**2`` in closed form, without autograd.

    Args:
        w: weight.
        x: input.
        b: bias.

    Returns:
        ``(dL/dw, dL/dx, dL/db)`` as Python floats.
    """
    residual = w * x + b
    g = 2 * residual
    return float(g * x), float(g * w), float(g)
