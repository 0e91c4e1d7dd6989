# MUTANT: never zeroes the gradients: they accumulate across calls
# FAILS: train_step_matches_reference, fit_first_epochs_match, fit_reaches_accuracy, train_step_any_optimizer, train_step_clears_old_gradients
# CODE train_step_matches_reference: EX02_ZERO_GRAD
# CODE fit_first_epochs_match: EX02_FIT_DRIFTS
# CODE train_step_any_optimizer: EX02_STEP_DRIFTS
# CODE train_step_clears_old_gradients: EX02_STEP_DRIFTS
"""Exercise 02 — the explicit training loop (PyTorch: the tape).

Write the four pieces of a PyTorch training loop. In PyTorch training is a
sequence of *side effects*: `loss.backward()` adds gradients into each
parameter's `.grad` (they accumulate until you zero them), `optimizer.step()`
updates the parameters in place, and `model.train()` / `model.eval()` flip a
flag that layers such as Dropout read. (In JAX, exercise 05, a step is a pure
function that returns new parameters and a new optimizer state instead.)

What to build:
    - `bce_with_logits(logits, targets)`: the mean over all elements of
      `max(z, 0) - z*y + log(1 + exp(-|z|))` with `z = logits`, `y = targets`.
      This form never computes `exp` of a large positive number, so it stays
      finite for |z| up to 1e4 (a naive `-(y*log(sigmoid(z)) + ...)` gives
      inf/nan there). Do not call `F.binary_cross_entropy_with_logits` or
      `nn.BCEWithLogitsLoss`: the grader detects it. Return a 0-d tensor that
      autograd can differentiate.
    - `train_step(model, optimizer, x, y, loss_fn)`: `model.train()`, zero the
      gradients, forward, `loss = loss_fn(model(x), y)`, `loss.backward()`,
      `optimizer.step()`. Return the loss computed *before* the update as a
      Python float (`loss.item()`), not a tensor.
    - `evaluate(model, x, y, loss_fn)`: `model.eval()`, then under
      `torch.no_grad()` (no graph is built) return `(mean loss, accuracy)` as
      two Python floats, with accuracy = mean of `(sigmoid(logits) >= 0.5) == y`.
    - `fit(model, x, y, *, epochs, lr)`: create
      `torch.optim.Adam(model.parameters(), lr=lr)` and make `epochs`
      full-batch calls of `train_step` with `bce_with_logits`; return the list
      of the per-epoch losses (Python floats).

Shapes: `x` is `(N, d)`; `y` has the model output's shape (`(N, 1)` for a
binary classifier) and holds 0./1. floats.

Example:
    >>> model = torch.nn.Linear(2, 1)
    >>> losses = fit(model, torch.randn(64, 2), torch.ones(64, 1), epochs=3, lr=0.01)
    >>> len(losses), type(losses[0])
    (3, <class 'float'>)
"""

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
    z, y = logits, targets
    per_element = torch.clamp(z, min=0) - z * y + torch.log1p(torch.exp(-torch.abs(z)))
    return per_element.mean()


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
        logits = model(x)
        loss = loss_fn(logits, y).item()
        predictions = (torch.sigmoid(logits) >= 0.5).to(y.dtype)
        accuracy = (predictions == y).float().mean().item()
    return loss, accuracy


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
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    return [train_step(model, optimizer, x, y, bce_with_logits) for _ in range(epochs)]
