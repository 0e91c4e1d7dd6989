"""ex11: other valid ways to write the exercise get full marks (no false fails on style)."""

from __future__ import annotations

import pytest
from conftest import make_submission

EX = "ex11_torch_compile"

# torch.where for the clip (and an explicit zero guard), explain called in two steps,
# mark_dynamic on every batch instead of dynamic=True, a step compiled lazily on its first call
# whose compiled function also runs backward (a graph break there is fine). (Compiling the optimizer's
# step too is not: under Dynamo, Adam's bias correction drifts from eager, 0.04 after 5 steps here.)
VARIANT_WHERE_MARK_DYNAMIC = '''
import torch


def clip_by_norm(x, max_norm):
    norm = x.pow(2).sum().sqrt()
    safe = torch.where(norm > 0, norm, torch.ones_like(norm))
    return torch.where(norm > max_norm, x * (max_norm / safe), x)


def graph_report(fn, *args):
    explain = torch._dynamo.explain(fn)
    out = explain(*args)
    return out.graph_count, out.graph_break_count


def compile_for_any_batch(model, backend="inductor"):
    compiled = torch.compile(model, backend=backend)

    def run(x):
        torch._dynamo.mark_dynamic(x, 0)
        return compiled(x)

    return run


def compiled_train_step(model, optimizer, loss_fn, backend="inductor"):
    cache = {}

    def loss_and_grads(x, y):
        loss = loss_fn(model(x), y)
        loss.backward()
        return loss.detach()

    def step(x, y):
        model.train()
        optimizer.zero_grad(set_to_none=True)
        if "fn" not in cache:
            cache["fn"] = torch.compile(loss_and_grads, backend=backend)
        loss = cache["fn"](x, y)
        optimizer.step()
        return float(loss)

    return step
'''

# Python's min() of a number and a tensor (Dynamo traces it), a small epsilon in the norm, the bound
# forward compiled (not nn.Module.compile: on an nn.Sequential it captures nothing in torch 2.13),
# torch.compile called as a function on a nested def with fullgraph=True.
VARIANT_MODULE_COMPILE = '''
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
'''

VARIANTS = {"where_mark_dynamic": VARIANT_WHERE_MARK_DYNAMIC, "module_compile": VARIANT_MODULE_COMPILE}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_valid_variant_gets_full_marks(run, tmp_path, name):
    sub = make_submission(tmp_path / "sub", {EX: VARIANTS[name]}, only=[EX])
    res = run.grade([str(sub)], only=[EX])[0]["exercises"][EX]
    failed = {t["name"]: t["message"] for t in res["tests"] if not t["passed"]}
    assert not failed, failed
