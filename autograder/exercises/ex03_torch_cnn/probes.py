"""Probes for ex03_torch_cnn: build the student's CNN, load given weights, measure.

``args`` is the positional argument list of the constructor: ``[num_classes,
dropout]``, or ``[]`` for ``CNN()`` (the defaults). Random bits (dropout masks)
come from a seed the grader sends, so every probe is deterministic.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from autograder.core.i18n import label
from autograder.probing.tools import DEVICE, ProbeFail, get, instance_of, torch_to_np, type_name

# Bound before any student code loads.
_from_numpy = torch.from_numpy
_manual_seed = torch.manual_seed
_no_grad = torch.no_grad
_Tensor = torch.Tensor
_Module = torch.nn.Module


def _build(mod: Any, args: list | dict) -> torch.nn.Module:
    """``CNN(*args)``, or ``CNN(**args)`` for a dict (the constructor called by keyword)."""
    model = get(mod, "CNN")(**args) if isinstance(args, dict) else get(mod, "CNN")(*args)
    if not isinstance(model, _Module):
        raise ProbeFail("WRONG_TYPE", call="CNN(...)", got=type_name(model), expected=instance_of("nn.Module"))
    return model


def _loaded(mod: Any, args: list, params: list[np.ndarray]) -> torch.nn.Module:
    """The student's CNN with ``params`` copied in by ``parameters()`` order, on the grading device."""
    model = _build(mod, args)
    mine = list(model.parameters())
    shapes = [tuple(p.shape) for p in mine]
    if shapes != [tuple(a.shape) for a in params]:
        raise ProbeFail("EX03_PARAM_SHAPES", call="CNN(...).parameters()", got=shapes)
    with _no_grad():
        for p, a in zip(mine, params, strict=True):
            p.copy_(_from_numpy(np.array(a, dtype=np.float32)))
    return model.to(DEVICE["torch"])


def _x(x: np.ndarray) -> torch.Tensor:
    return _from_numpy(np.array(x, dtype=np.float32)).to(DEVICE["torch"])


def _run(model: torch.nn.Module, x: torch.Tensor, call: str) -> np.ndarray:
    with _no_grad():
        out = model(x)
    return torch_to_np(out, call)


def probe_param_shapes(mod: Any, args: list) -> list[list[int]]:
    """Shapes of ``CNN(*args).parameters()`` in order."""
    return [list(p.shape) for p in _build(mod, args).parameters()]


def probe_forward(mod: Any, args: list, params: list[np.ndarray], x: np.ndarray) -> np.ndarray:
    """Output of ``forward`` in ``eval()`` mode with the given weights."""
    model = _loaded(mod, args, params).eval()
    return _run(model, _x(x), "CNN.forward")


def probe_outputs(mod: Any, args: list, params: list[np.ndarray], x: np.ndarray, seed: int) -> dict[str, Any]:
    """Two ``eval()`` outputs and two ``train()`` outputs of the same input (dropout seeded)."""
    model = _loaded(mod, args, params)
    xt = _x(x)
    _manual_seed(seed)
    model.eval()
    evals = [_run(model, xt, "CNN(...).eval().forward") for _ in range(2)]
    model.train()
    trains = [_run(model, xt, "CNN(...).train().forward") for _ in range(2)]
    return {"eval": evals, "train": trains}


def _last_linear(model: torch.nn.Module) -> torch.nn.Module:
    """The module that owns the last weight of ``parameters()`` (the final Linear)."""
    target = list(model.parameters())[-2]
    for m in model.modules():
        if any(p is target for p in m.parameters(recurse=False)) and m is not model:
            return m
    raise ProbeFail("EX03_LAST_LINEAR")


def probe_last_linear_input(mod: Any, args: list, params: list[np.ndarray], x: np.ndarray,
                            seed: int) -> dict[str, Any]:
    """What reaches the last Linear layer, in ``eval()`` and in ``train()`` mode (dropout seeded)."""
    model = _loaded(mod, args, params)
    layer = _last_linear(model)
    seen: list[Any] = []

    def hook(_module: Any, inputs: tuple) -> None:
        seen.append(inputs[0] if inputs else None)

    handle = layer.register_forward_pre_hook(hook)
    try:
        xt = _x(x)
        _manual_seed(seed)
        out = {}
        for mode in ("eval", "train"):
            model.train(mode == "train")
            seen.clear()
            with _no_grad():
                model(xt)
            if not seen:
                raise ProbeFail("EX03_LAST_LINEAR")
            out[mode] = torch_to_np(seen[-1], label("ex03.call.last_linear_input"))
    finally:
        handle.remove()
    return out


def probe_gradients(mod: Any, args: list, params: list[np.ndarray], x: np.ndarray,
                    w: np.ndarray) -> list[np.ndarray]:
    """Gradients of ``sum(forward(x) * w)`` (eval mode) w.r.t. every parameter, in order."""
    model = _loaded(mod, args, params).eval()
    out = model(_x(x))
    if not isinstance(out, _Tensor):
        raise ProbeFail("WRONG_TYPE", call="CNN.forward", got=type_name(out), expected=instance_of("torch.Tensor"))
    if out.grad_fn is None:
        raise ProbeFail("EX03_NO_GRAPH")
    (out * _x(w)).sum().backward()
    grads = []
    for p in model.parameters():
        if p.grad is None:
            raise ProbeFail("EX03_NO_GRAD")
        grads.append(torch_to_np(p.grad, "grad"))
    return grads


def probe_train_gradients(mod: Any, args: list, params: list[np.ndarray], x: np.ndarray, w: np.ndarray,
                          seed: int) -> dict[str, Any]:
    """Gradients of ``sum(forward(x) * w)`` in ``train()`` mode (dropout on, its mask drawn after
    ``torch.manual_seed(seed)``) w.r.t. every parameter, in order, and ``zeros``: where the last Linear's input is 0
    (the dropout mask with the ReLU's zeros), so the grader compares gradients only where both sides drew one mask.

    A backward refused because an in-place operation overwrote a value it needs (dropout with ``inplace=True``
    after a ReLU: eval() mode never shows it) raises ``EX03_INPLACE_BACKWARD``.
    """
    model = _loaded(mod, args, params).train()
    layer = _last_linear(model)
    seen: list[Any] = []

    def hook(_module: Any, inputs: tuple) -> None:
        seen.append(inputs[0] if inputs else None)

    handle = layer.register_forward_pre_hook(hook)
    try:
        _manual_seed(seed)
        out = model(_x(x))
    finally:
        handle.remove()
    if not isinstance(out, _Tensor):
        raise ProbeFail("WRONG_TYPE", call="CNN.forward", got=type_name(out), expected=instance_of("torch.Tensor"))
    if out.grad_fn is None:
        raise ProbeFail("EX03_NO_GRAPH")
    if not seen:
        raise ProbeFail("EX03_LAST_LINEAR")
    zeros = torch_to_np(seen[-1], label("ex03.call.last_linear_input")) == 0.0
    try:
        (out * _x(w)).sum().backward()
    except RuntimeError as err:
        if "modified by an inplace operation" in str(err):
            raise ProbeFail("EX03_INPLACE_BACKWARD") from None
        raise
    grads = []
    for p in model.parameters():
        if p.grad is None:
            raise ProbeFail("EX03_NO_GRAD")
        grads.append(torch_to_np(p.grad, "grad"))
    return {"grads": grads, "zeros": zeros}
