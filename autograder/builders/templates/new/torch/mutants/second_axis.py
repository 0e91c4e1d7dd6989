# MUTANT: reduces over axis 1, which is the last axis of a 2-D input only
# FAILS: any_leading_axes
# CODE any_leading_axes: __KEY___LEADING_AXES
import torch
from torch import Tensor


def __FUNC__(x: Tensor) -> Tensor:
    mean = x.mean(dim=1, keepdim=True)
    var = x.var(dim=1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)
