# ATTACK: patches numpy comparisons and asarray, forward wrong (no ReLU)
# TARGET: ex01_torch_mlp
# STATUS: graded
# FAILS: forward_matches_reference, gradients_flow, hidden_dims_any_sequence
# MESSAGE: differences from the reference
import numpy as np
np.allclose = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None
np.array_equal = lambda *a, **k: True
_real = np.asarray
np.asarray = lambda a, *r, **k: _real(a, *r, **k) * 0

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
            x = layer(x)
        return self.layers[-1](x)
