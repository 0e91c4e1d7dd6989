# MUTANT: applies a sigmoid to the output (probabilities instead of logits)
# FAILS: forward_matches_reference, output_is_logits, empty_hidden_dims, gradients_flow, hidden_dims_any_sequence
# CODE forward_matches_reference: EX01_LOGITS
# CODE output_is_logits: EX01_LOGITS
"""Exercise 01 — write an `nn.Module` (PyTorch: the tape).

Build a multi-layer perceptron as a PyTorch `nn.Module`. In PyTorch a model
is an *object that owns its parameters*: `nn.Linear` layers created in
`__init__` register their weights, and `forward` only says how data flows.
Autograd records every operation on a tape while `forward` runs, so you
never write the backward pass. (In JAX, exercise 04, the same model is a
pure function of an explicit parameter pytree.)

What to build:
    - `len(hidden_dims) + 1` `nn.Linear` layers: input_dim -> h1 -> ... -> output_dim.
    - ReLU after every layer except the last; the output is logits (no sigmoid).
    - `hidden_dims` may be empty: then the model is a single `nn.Linear`.
    - `[p.shape for p in model.parameters()]` must be, in order,
      `(h1, input_dim), (h1,), (h2, h1), (h2,), ..., (output_dim, h_last), (output_dim,)`.
    - `forward` must work after `model.to(device)`: do not create tensors on a
      fixed device inside `forward`.

Example:
    >>> model = MLP(2, [32, 32], 1)
    >>> model(torch.zeros(5, 2)).shape
    torch.Size([5, 1])
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn


class MLP(nn.Module):
    """A ReLU multi-layer perceptron that returns logits.

    Args:
        input_dim: number of input features d.
        hidden_dims: widths of the hidden layers (may be empty).
        output_dim: number of outputs.
    """

    def __init__(self, input_dim: int, hidden_dims: Sequence[int], output_dim: int):
        super().__init__()
        dims = [input_dim, *hidden_dims, output_dim]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, x: Tensor) -> Tensor:
        """Maps `(N, input_dim)` inputs to `(N, output_dim)` logits."""
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x))
        return torch.sigmoid(self.layers[-1](x))
