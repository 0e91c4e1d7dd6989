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
    zeros = torch.zeros_like(logits)
    lse = torch.logsumexp(torch.stack([zeros, logits]), dim=0)
    return (lse - logits * targets).mean()


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
    out = model(x)
    loss_value = loss_fn(out, y)
    scalar = float(loss_value)
    loss_value.backward()
    optimizer.step()
    return scalar


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
        logits = model(x)
        mean_loss = float(loss_fn(logits, y))
        n_right = int(((logits >= 0) == (y >= 0.5)).sum())
    return mean_loss, n_right / len(y)


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
    optim = torch.optim.Adam(model.parameters(), lr=lr)
    out = []
    for _e in range(epochs):
        step_loss = train_step(model, optim, x, y, bce_with_logits)
        out.append(step_loss)
    return out
