# ATTACK: sends UDP datagrams to a loopback listener the test runs and to a public address
# TARGET: ex01_torch_mlp
# STATUS: graded
# FAILS: none
# MESSAGE: 
import os
import socket
for _addr in (("127.0.0.1", int(os.environ.get("TAPETRACE_ATTACK_UDP", "1"))), ("8.8.8.8", 53)):
    try:
        _s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        _s.sendto(b"owned", _addr)
        _s.close()
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
