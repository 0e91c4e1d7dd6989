# ATTACK: the answer's work relayed through short-lived threads and forked children (each ends between two looks), 60 CPU-s in all
# TARGET: ex01_torch_mlp
# STATUS: graded
# FAILS: forward_matches_reference, output_is_logits, empty_hidden_dims, works_on_any_device, gradients_flow, hidden_dims_any_sequence
# MESSAGE: did not finish within

import hashlib
import os
import threading
import time
from collections.abc import Sequence

import torch
from torch import Tensor, nn

_BLOCK = b"\0" * (1 << 20)


def _burn(seconds: float) -> None:
    t = time.process_time()
    while time.process_time() - t < seconds:
        hashlib.sha256(_BLOCK).digest()  # releases the GIL: threads run side by side


def _relay(total: float) -> None:
    """Works through two forked children and two threads at a time, each living a few milliseconds."""
    while sum(os.times()[:4]) < total:
        kids = []
        for _ in range(2):
            pid = os.fork()
            if pid == 0:
                t = time.process_time()
                while time.process_time() - t < 0.01:
                    pass
                os._exit(0)
            kids.append(pid)
        threads = [threading.Thread(target=_burn, args=(0.01,)) for _ in range(2)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        for pid in kids:
            os.waitpid(pid, 0)


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
        _relay(sum(os.times()[:4]) + 60.0)
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x))
        return self.layers[-1](x)
