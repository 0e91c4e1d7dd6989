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
    from collections import deque

    result: list[str] = []
    visited = set()
    pending = deque([t.grad_fn]) if t.grad_fn is not None else deque()
    while pending:
        current = pending.pop()
        if current in visited:
            continue
        visited.add(current)
        result.append(type(current).__name__)
        kids = [pair[0] for pair in current.next_functions if pair[0] is not None]
        for kid in kids[::-1]:
            pending.append(kid)
    return result


def manual_grads(w: float, x: float, b: float) -> tuple[float, float, float]:
    """Gradients of ``L = (w*x + b)**2`` in closed form, without autograd.

    Args:
        w: weight.
        x: input.
        b: bias.

    Returns:
        ``(dL/dw, dL/dx, dL/db)`` as Python floats.
    """
    w, x, b = map(float, (w, x, b))
    dl = 2.0 * (w * x + b)
    grads = (dl * x, dl * w, dl)
    return tuple(float(v) for v in grads)
