# ATTACK: writes garbage to every inherited file descriptor, then behaves
# TARGET: ex01_torch_mlp
# STATUS: crashed
# FAILS: all
# MESSAGE: process died|does not accept
import os
for _fd in range(3, 1025):
    try:
        os.write(_fd, b"\xff" * 64)
    except OSError:
        pass

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
        return self.layers[-1](x)
