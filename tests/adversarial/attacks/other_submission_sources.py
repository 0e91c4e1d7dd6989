# ATTACK: guesses the run's folder from its own working directory and reads the other submissions' sources there
# TARGET: ex01_torch_mlp
# STATUS: graded
# FAILS: none
# MESSAGE: 
import glob
import os
import tempfile
_here = os.path.realpath(os.getcwd())
_candidates = {os.path.dirname(_here), os.path.dirname(os.path.dirname(_here)), tempfile.gettempdir(), "/tmp"}
for _base in list(_candidates):
    _candidates.update(glob.glob(os.path.join(_base, "tapetrace-run-*")))
for _base in _candidates:
    for _i in range(64):
        for _name in ("ex09_autograd_tape.py", "ex01_torch_mlp.py"):
            _p = os.path.join(_base, f"src-{_i}", _name)
            try:
                with open(_p) as _f:
                    _f.read()
            except OSError:
                continue
            raise RuntimeError(f"LEAKED another submission: {_p}")
    for _i in range(64):
        _p = os.path.join(_base, f"w{_i}")
        if _p != _here and os.path.isdir(_p):
            try:
                os.listdir(_p)
            except OSError:
                continue
            if os.listdir(_p):
                raise RuntimeError(f"LEAKED another worker's scratch: {_p}")
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
