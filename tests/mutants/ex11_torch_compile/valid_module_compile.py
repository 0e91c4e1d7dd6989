# VALID: Python's min() of a number and a tensor (Dynamo traces it), a small epsilon in the norm, the bound
#   forward compiled (not nn.Module.compile: on an nn.Sequential it captures nothing in torch 2.13),
#   torch.compile called as a function on a nested def with fullgraph=True.
# (expected: full marks; was a case of tests/test_ex11_torch_compile_extra.py)
import torch
from torch import nn


def clip_by_norm(x, max_norm):
    return x * min(1.0, max_norm / (torch.linalg.vector_norm(x) + 1e-7))


def graph_report(fn, *args):
    from torch._dynamo import explain

    report = explain(fn)(*args)
    return (int(report.graph_count), int(report.graph_break_count))


def compile_for_any_batch(model: nn.Module, backend: str = "inductor"):
    return torch.compile(model.forward, backend=backend, dynamic=True)


def compiled_train_step(model, optimizer, loss_fn, backend="inductor"):
    def forward_and_loss(x, y):
        out = model(x)
        return loss_fn(out, y)

    compiled = torch.compile(forward_and_loss, backend=backend, fullgraph=True)

    def step(x, y):
        model.train()
        for p in model.parameters():
            p.grad = None
        loss = compiled(x, y)
        loss.backward()
        optimizer.step()
        return float(loss.item())

    return step
