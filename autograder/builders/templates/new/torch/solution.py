"""Exercise __NN__ — __TITLE__.

Standardise the rows of a tensor: subtract each row's mean and divide by its
standard deviation, `(x - mean) / sqrt(var + 1e-5)`, with the mean and the
biased variance taken over the last axis. (This is the skeleton `tapetrace new`
wrote: replace it with the exercise's real instructions.)

What to build:
    - `__FUNC__(x)` takes a float32 tensor `x` of shape `(..., d)` and returns
      a tensor of the same shape.
    - The statistics are taken over the last axis only, whatever the number of
      leading axes.

Example:
    >>> __FUNC__(torch.zeros(4, 3)).shape
    torch.Size([4, 3])
"""

from __future__ import annotations

import torch
from torch import Tensor


def __FUNC__(x: Tensor) -> Tensor:
    """Standardises `x` over its last axis.

    Args:
        x: float32 tensor `(..., d)`.

    Returns:
        `(x - mean) / sqrt(var + 1e-5)` per row, shape `(..., d)`.
    """
    # BEGIN SOLUTION
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)
    # END SOLUTION
