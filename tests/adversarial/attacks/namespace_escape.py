# ATTACK: makes a user namespace (root inside it) to mount over the hiding, or joins the grader's namespaces
# TARGET: ex01_torch_mlp
# STATUS: graded
# FAILS: none
# MESSAGE: 
import ctypes
import os
_libc = ctypes.CDLL(None, use_errno=True)
if _libc.unshare(0x10000000 | 0x00020000) == 0:  # CLONE_NEWUSER | CLONE_NEWNS
    raise RuntimeError("LEAKED: made a user namespace")
for _ns in ("mnt", "pid", "net"):
    try:
        _fd = os.open(f"/proc/{os.getppid()}/ns/{_ns}", os.O_RDONLY)
    except OSError:
        continue
    if _libc.setns(_fd, 0) == 0:
        raise RuntimeError(f"LEAKED: joined the parent's {_ns} namespace")
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
