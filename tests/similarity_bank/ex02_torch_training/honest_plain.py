from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

LossFn = Callable[[Tensor, Tensor], Tensor]


def bce_with_logits(logits: Tensor, targets: Tensor) -> Tensor:
    """Numerically stable binary cross-entropy on logits, averaged over all elements.

    Args:
        logits: raw scores z, any shape, e.g. `(N, 1)`.
        targets: 0./1. floats y, same shape as `logits`.

    Returns:
        A 0-d tensor: mean of `max(z, 0) - z*y + log(1 + exp(-|z|))`.
    """
    z, t = logits, targets
    return (z.clamp(min=0) - z * t + torch.log1p(torch.exp(-z.abs()))).mean()


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, x: Tensor, y: Tensor,
               loss_fn: LossFn) -> float:
    """One optimisation step on the batch `(x, y)`.

    Args:
        model: the network; put in training mode.
        optimizer: a `torch.optim` optimizer over `model.parameters()`.
        x: inputs `(N, d)`.
        y: targets with the model output's shape.
        loss_fn: `loss_fn(model(x), y)` -> 0-d tensor.

    Returns:
        The loss before the update, as a Python float.
    """
    model.train()
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def evaluate(model: nn.Module, x: Tensor, y: Tensor, loss_fn: LossFn) -> tuple[float, float]:
    """Loss and accuracy of a binary classifier, without building a graph.

    Args:
        model: the network; put in evaluation mode.
        x: inputs `(N, d)`.
        y: 0./1. targets with the model output's shape.
        loss_fn: `loss_fn(model(x), y)` -> 0-d tensor.

    Returns:
        `(mean loss, accuracy)` as Python floats.
    """
    model.eval()
    with torch.no_grad():
        out = model(x)
        loss = loss_fn(out, y).item()
        acc = ((out > 0).float() == y).float().mean().item()
    return loss, acc


def fit(model: nn.Module, x: Tensor, y: Tensor, *, epochs: int, lr: float) -> list[float]:
    """Full-batch training with Adam and `bce_with_logits`.

    Args:
        model: the network (trained in place).
        x: inputs `(N, d)`.
        y: 0./1. targets with the model output's shape.
        epochs: number of full-batch steps.
        lr: Adam's learning rate.

    Returns:
        The `epochs` losses, each measured before its update, as Python floats.
    """
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    history = []
    for _ in range(epochs):
        history.append(train_step(model, opt, x, y, bce_with_logits))
    return history
