# VALID: the moments from sums over the last axis, no mean/var helpers
import torch
from torch import Tensor


def __FUNC__(x: Tensor) -> Tensor:
    d = x.shape[-1]
    centred = x - x.sum(dim=-1, keepdim=True) / d
    return centred * torch.rsqrt((centred * centred).sum(dim=-1, keepdim=True) / d + 1e-5)
