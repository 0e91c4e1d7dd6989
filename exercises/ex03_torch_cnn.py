# Generated from solutions/ex03_torch_cnn.py by `tapetrace stubs`: edit the solution, not this file.
"""Exercise 03 — a CNN, channels-first (PyTorch: the tape).

Build a small convolutional network for the 8x8 `load_digits` images as a
PyTorch `nn.Module`. PyTorch images are *channels-first*: a batch is
`(N, C, H, W)`, so the digits arrive as `(N, 1, 8, 8)`, and flattening a
`(N, 32, 2, 2)` feature map gives the 128 features in channel-major order
(all of channel 0, then channel 1, ...). Dropout is switched by a flag stored
on the module: `model.train()` turns it on, `model.eval()` turns it off.
(In Flax, exercise 07, images are channels-last `(N, H, W, C)` and dropout
is switched by a `deterministic` argument plus an explicit PRNG key.)

What to build, in this order:
    Conv2d(1, 16, 3, padding=1), ReLU, MaxPool2d(2),      # (N, 16, 4, 4)
    Conv2d(16, 32, 3, padding=1), ReLU, MaxPool2d(2),     # (N, 32, 2, 2)
    Flatten,                                              # (N, 128)
    Linear(128, 64), ReLU, Dropout(dropout),
    Linear(64, num_classes)                               # (N, num_classes) logits

    - `[p.shape for p in model.parameters()]` must be, in order,
      `(16, 1, 3, 3), (16,), (32, 16, 3, 3), (32,), (64, 128), (64,),
      (num_classes, 64), (num_classes,)`: create the layers in forward order.
    - Use the `num_classes` and `dropout` arguments (defaults 10 and 0.3).
    - The output is logits (no softmax).
    - In `eval()` mode the output is deterministic; in `train()` mode dropout
      zeroes hidden units at random, each unit of each example on its own
      (use `nn.Dropout`, which reads the flag;
      `F.dropout(x, p)` without `training=self.training` is always on).
    - Gradients must flow in `train()` mode too: no in-place operation on a
      ReLU's output (a dropout with `inplace=True` after the ReLU overwrites
      what the ReLU's backward needs, and `loss.backward()` fails; `eval()`
      mode hides it, since dropout does nothing there).

Example:
    >>> model = CNN(num_classes=10, dropout=0.3).eval()
    >>> model(torch.zeros(5, 1, 8, 8)).shape
    torch.Size([5, 10])
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class CNN(nn.Module):
    """Two conv blocks and a two-layer classifier head with dropout.

    Args:
        num_classes: number of output logits.
        dropout: probability of zeroing each hidden unit before the last layer
            (in training mode only).
    """

    def __init__(self, num_classes: int = 10, dropout: float = 0.3):
        super().__init__()
        # YOUR CODE HERE
        raise NotImplementedError("ex03_torch_cnn: replace this line with your code")

    def forward(self, x: Tensor) -> Tensor:
        """Maps `(N, 1, 8, 8)` images to `(N, num_classes)` logits."""
        # YOUR CODE HERE
        raise NotImplementedError("ex03_torch_cnn: replace this line with your code")

