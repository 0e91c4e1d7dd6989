"""Probes for __NAME__: call the student's function on given inputs, on the grading device; measure."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from autograder.probing.tools import DEVICE, get, torch_to_np

_from_numpy = torch.from_numpy  # bound at import, before student code could patch torch


def probe_output(mod: Any, x: np.ndarray) -> np.ndarray:
    """``__FUNC__(x)`` for a float32 input, as a numpy array (checked to be a torch.Tensor)."""
    out = get(mod, "__FUNC__")(_from_numpy(x).to(DEVICE["torch"]))
    return torch_to_np(out, "__FUNC__(x)")
