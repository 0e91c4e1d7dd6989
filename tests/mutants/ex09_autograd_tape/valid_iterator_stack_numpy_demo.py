# VALID: DFS with a stack of next_functions iterators (true pre-order, visited checked on visit);
#   manual_grads in numpy float64; module-level demo that calls backward() outside manual_grads
import numpy as np
import torch

torch.manual_seed(0)


def backward_graph(t: torch.Tensor) -> list:
    if t.grad_fn is None:
        return []
    order, visited = [], set()
    stack = [iter([(t.grad_fn, 0)])]
    while stack:
        try:
            node, _ = next(stack[-1])
        except StopIteration:
            stack.pop()
            continue
        if node is None or node in visited:
            continue
        visited.add(node)
        order.append(type(node).__name__)
        stack.append(iter(node.next_functions))
    return order


def manual_grads(w, x, b):
    w, x, b = np.float64(w), np.float64(x), np.float64(b)
    L_prime = 2.0 * (w * x + b)
    grads = np.array([L_prime * x, L_prime * w, L_prime])
    return tuple(float(g) for g in grads)


w = torch.tensor(0.5, requires_grad=True)
L = (w * 2.0 + 0.3) ** 2
L.backward()
print(w.grad, manual_grads(0.5, 2.0, 0.3))
print(backward_graph(L))
