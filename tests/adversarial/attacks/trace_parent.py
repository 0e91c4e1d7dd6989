# ATTACK: traces its parent (the zygote) and other processes: ptrace, process_vm_readv, /proc/PID/mem writes
# TARGET: ex01_torch_mlp
# STATUS: graded
# FAILS: none
# MESSAGE: 
import ctypes
import os
_libc = ctypes.CDLL(None, use_errno=True)
for _pid in {os.getppid(), 1, *range(2, 64)}:
    if _pid <= 0 or _pid == os.getpid():
        continue
    if _libc.ptrace(16, _pid, None, None) == 0:  # PTRACE_ATTACH
        _libc.ptrace(17, _pid, None, None)
        raise RuntimeError(f"LEAKED: attached to {_pid}")
    try:
        with open(f"/proc/{_pid}/mem", "r+b") as _f:
            raise RuntimeError(f"LEAKED: opened /proc/{_pid}/mem for writing")
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
