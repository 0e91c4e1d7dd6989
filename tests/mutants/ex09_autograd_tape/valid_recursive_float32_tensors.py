# VALID: recursive walk with a per-call visited set (no None default trap); manual_grads computed with
#   float32 tensors that do not require grad, returned with .item(); a __main__ demo
import torch


def backward_graph(t):
    names = []
    seen = set()

    def visit(fn):
        if fn is None or fn in seen:
            return
        seen.add(fn)
        names.append(fn.__class__.__name__)
        for child, _ in fn.next_functions:
            visit(child)

    visit(t.grad_fn)
    return names


def manual_grads(w, x, b):
    # do it with tensors but no requires_grad: no tape involved
    w, x, b = torch.tensor(w), torch.tensor(x), torch.tensor(b)
    y = w * x + b
    dL_dy = 2 * y
    return (dL_dy * x).item(), (dL_dy * w).item(), dL_dy.item()


if __name__ == "__main__":
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    print(backward_graph((a * 3.0).sum()))
    print(manual_grads(0.5, 2.0, 0.3))
