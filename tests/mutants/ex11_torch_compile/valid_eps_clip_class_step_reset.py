# VALID: clip_by_norm as clip_grad_norm_ does it (max_norm / (norm + 1e-6), clamped at 1); graph_report resets
#   Dynamo first; compile_for_any_batch with fullgraph=True; the step is a class whose forward+loss is a compiled
#   bound method
import torch
import torch._dynamo
from torch import nn


def clip_by_norm(x: torch.Tensor, max_norm: float) -> torch.Tensor:
    # same recipe as torch.nn.utils.clip_grad_norm_
    total_norm = torch.linalg.vector_norm(x, 2)
    clip_coef = max_norm / (total_norm + 1e-6)
    clip_coef_clamped = torch.clamp(clip_coef, max=1.0)
    return x * clip_coef_clamped


def graph_report(fn, *args):
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(fn)(*args)
    return explanation.graph_count, explanation.graph_break_count


def compile_for_any_batch(model, backend="inductor"):
    return torch.compile(model, backend=backend, dynamic=True, fullgraph=True)


class _Step:
    def __init__(self, model, optimizer, loss_fn, backend):
        self.model, self.optimizer, self.loss_fn = model, optimizer, loss_fn
        self._fwd = torch.compile(self._forward_and_loss, backend=backend)

    def _forward_and_loss(self, x, y):
        return self.loss_fn(self.model(x), y)

    def __call__(self, x, y):
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        loss = self._fwd(x, y)
        loss.backward()
        self.optimizer.step()
        return float(loss.detach())


def compiled_train_step(model, optimizer, loss_fn, backend="inductor"):
    return _Step(model, optimizer, loss_fn, backend)
