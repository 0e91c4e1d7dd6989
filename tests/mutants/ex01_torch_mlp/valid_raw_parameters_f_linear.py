# VALID: no nn.Linear modules: weight/bias nn.Parameters registered per layer in the contract's order
#   (register_parameter), initialised like nn.Linear, applied with F.linear
"""MLP with raw parameters and F.linear (no nn.Linear modules)."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class MLP(nn.Module):
    def __init__(self, input_dim, hidden_dims, output_dim):
        super().__init__()
        sizes = [input_dim] + list(hidden_dims) + [output_dim]
        self.n_layers = len(sizes) - 1
        for i in range(self.n_layers):
            fan_in, fan_out = sizes[i], sizes[i + 1]
            w = nn.Parameter(torch.empty(fan_out, fan_in))
            b = nn.Parameter(torch.empty(fan_out))
            nn.init.kaiming_uniform_(w, a=math.sqrt(5))
            bound = 1 / math.sqrt(fan_in)
            nn.init.uniform_(b, -bound, bound)
            self.register_parameter(f"weight{i}", w)
            self.register_parameter(f"bias{i}", b)

    def forward(self, x):
        for i in range(self.n_layers):
            x = F.linear(x, getattr(self, f"weight{i}"), getattr(self, f"bias{i}"))
            if i < self.n_layers - 1:
                x = F.relu(x)
        return x
