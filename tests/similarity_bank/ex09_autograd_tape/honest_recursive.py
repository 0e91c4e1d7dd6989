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
    seen = set()
    order = []

    def visit(node):
        if node is None or node in seen:
            return
        seen.add(node)
        order.append(type(node).__name__)
        for nxt, _idx in node.next_functions:
            visit(nxt)

    visit(t.grad_fn)
    return order


def manual_grads(w: float, x: float, b: float) -> tuple[float, float, float]:
    """Gradients of ``L = (w*x + b)**2`` in closed form, without autograd.

    Args:
        w: weight.
        x: input.
        b: bias.

    Returns:
        ``(dL/dw, dL/dx, dL/db)`` as Python floats.
    """
    h = float(w) * float(x) + float(b)
    return 2.0 * h * float(x), 2.0 * h * float(w), 2.0 * h
