# ATTACK: writes files to .., ~, /tmp and next to the grader; must land nowhere
# TARGET: ex01_torch_mlp
# STATUS: graded
# FAILS: none
# MESSAGE: 
import os
import pathlib
for _p in ("../tapetrace_attack_parent.txt", os.path.expanduser("~/tapetrace_attack_home.txt"),
           "/tmp/tapetrace_attack_tmp.txt", "/dev/shm/tapetrace_attack_shm.txt"):
    try:
        with open(_p, "w") as _f:
            _f.write("owned")
    except OSError:
        pass
try:
    import autograder
    (pathlib.Path(autograder.__file__).parent / "tapetrace_attack_engine.txt").write_text("owned")
except Exception:
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
