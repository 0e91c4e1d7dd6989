"""Probe side of the ``torch.optim`` family (:mod:`autograder.probing.families`), and what an optimizer did.

Runs in the worker beside student code; torch is bound at import, before any student code loads.

- :func:`torch_optimizer` builds the optimizer a spec names, over given parameters;
- :func:`put_gradients` leaves gradients on a model's parameters, as an earlier ``backward()``
  would: a training step must clear them before its own ``backward()`` (one that zeroes them only
  after ``optimizer.step()`` is right only while the gradients start at zero);
- :class:`StepRecorder` records every ``torch.optim`` optimizer that steps while it is active (its
  class, its settings, which parameters it holds, how many steps), through torch's global
  optimizer step hook: "which optimizer steps, with which settings" is then decided exactly, at
  every grading seed, instead of through the size of a difference in the losses.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

_SGD, _Adam, _AdamW, _RMSprop = torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW, torch.optim.RMSprop
_register_step_hook = register_optimizer_step_pre_hook
_from_numpy = torch.from_numpy
_Tensor = torch.Tensor

# param_group entries that choose an implementation, not the update rule.
IMPLEMENTATION_KEYS = frozenset({"params", "foreach", "fused", "capturable", "differentiable", "initial_lr"})


def torch_optimizer(spec: dict[str, Any], params: Any) -> torch.optim.Optimizer:
    """The optimizer a spec of :mod:`autograder.probing.families` names, over ``params``."""
    name, lr = spec["name"], float(spec["lr"])
    if name == "sgd":
        return _SGD(params, lr=lr)
    if name == "sgd_momentum":
        return _SGD(params, lr=lr, momentum=0.9)
    eps = float(spec.get("eps", 1e-8))
    if name == "adam":
        return _Adam(params, lr=lr, eps=eps)
    if name == "adamw":
        return _AdamW(params, lr=lr, betas=(0.9, 0.95), weight_decay=float(spec["weight_decay"]), eps=eps)
    if name == "rmsprop":
        return _RMSprop(params, lr=lr, eps=eps)
    raise ValueError(name)


def put_gradients(model: torch.nn.Module, grads: list[np.ndarray]) -> None:
    """Sets ``p.grad`` of each parameter (in ``parameters()`` order) to the given arrays."""
    for p, g in zip(model.parameters(), grads, strict=True):
        p.grad = _from_numpy(np.array(g, dtype=np.float32)).to(p.device)


def _plain(value: Any) -> Any:
    """A setting as plain data: tensors and numbers as floats/bools, tuples as lists."""
    if isinstance(value, _Tensor):
        return float(value.detach().cpu().item()) if value.numel() == 1 else "a tensor"
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return type(value).__name__


class StepRecorder:
    """Every ``torch.optim`` optimizer that steps while active, in the order of their first step.

    Use as a context manager; :meth:`summary` describes what stepped (plain data).
    """

    def __init__(self) -> None:
        self._seen: dict[int, tuple[Any, list[int]]] = {}
        self._handle: Any = None

    def _hook(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        key = id(optimizer)
        if key not in self._seen:
            self._seen[key] = (optimizer, [0])
        self._seen[key][1][0] += 1

    def __enter__(self) -> StepRecorder:
        self._handle = _register_step_hook(self._hook)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._handle.remove()

    def summary(self, model: torch.nn.Module) -> list[dict[str, Any]]:
        """Per optimizer that stepped: ``{"type": class name, "settings": [per param group: {name: value}]
        (implementation flags left out), "holds_model": holds exactly ``model.parameters()``, "steps": int}``."""
        wanted = {id(p) for p in model.parameters()}
        out = []
        for optimizer, (steps,) in self._seen.values():
            groups = getattr(optimizer, "param_groups", [])
            held = {id(p) for g in groups for p in g.get("params", [])}
            settings = [{k: _plain(v) for k, v in sorted(g.items()) if k not in IMPLEMENTATION_KEYS} for g in groups]
            out.append({"type": type(optimizer).__name__, "settings": settings, "holds_model": held == wanted,
                        "steps": int(steps)})
        return out
