# MUTANT: standardises over the first axis (the columns) instead of the last
# FAILS: matches_reference, any_leading_axes
# CODE matches_reference: MISMATCH
# CODE any_leading_axes: __KEY___LEADING_AXES
import torch
from torch import Tensor


def __FUNC__(x: Tensor) -> Tensor:
    mean = x.mean(dim=0, keepdim=True)
    var = x.var(dim=0, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)
