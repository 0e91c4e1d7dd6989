"""Probes for ex01_torch_mlp: build the student's MLP, load given weights, measure."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from autograder.probing.tools import DEVICE, ProbeFail, get, instance_of, torch_to_np, type_name


def _build(mod: Any, input_dim: int, hidden_dims: list[int], output_dim: int) -> torch.nn.Module:
    model = get(mod, "MLP")(input_dim, list(hidden_dims), output_dim)
    if not isinstance(model, torch.nn.Module):
        raise ProbeFail("WRONG_TYPE", call="MLP(...)", got=type_name(model), expected=instance_of("nn.Module"))
    return model


def load_params(model: torch.nn.Module, params: list[np.ndarray], call: str) -> None:
    """Copies arrays into ``model.parameters()`` by order (the contract's order)."""
    mine = list(model.parameters())
    shapes = [tuple(p.shape) for p in mine]
    if shapes != [tuple(a.shape) for a in params]:
        raise ProbeFail("EX01_PARAM_SHAPES", call=call, got=shapes)
    with torch.no_grad():
        for p, a in zip(mine, params, strict=True):
            p.copy_(torch.from_numpy(np.array(a, dtype=np.float32)))


def probe_param_shapes(mod: Any, input_dim: int, hidden_dims: list[int], output_dim: int) -> list[list[int]]:
    """Shapes of ``model.parameters()`` in order."""
    model = _build(mod, input_dim, hidden_dims, output_dim)
    return [list(p.shape) for p in model.parameters()]


def probe_forward(mod: Any, input_dim: int, hidden_dims: list[int], output_dim: int,
                  params: list[np.ndarray], x: np.ndarray) -> np.ndarray:
    """Output of ``forward`` with the given weights, on the grading device."""
    model = _build(mod, input_dim, hidden_dims, output_dim)
    return _forward_with(model, params, x)


def probe_gradients(mod: Any, input_dim: int, hidden_dims: list[int], output_dim: int,
                    params: list[np.ndarray], x: np.ndarray, w: np.ndarray) -> list[np.ndarray]:
    """Gradients of ``sum(forward(x) * w)`` w.r.t. every parameter, in order."""
    model = _build(mod, input_dim, hidden_dims, output_dim)
    load_params(model, params, "MLP.parameters()")
    device = DEVICE["torch"]
    model = model.to(device)
    out = model(torch.from_numpy(x).to(device))
    if not isinstance(out, torch.Tensor):
        raise ProbeFail("WRONG_TYPE", call="MLP.forward", got=type_name(out), expected=instance_of("torch.Tensor"))
    if out.grad_fn is None:
        raise ProbeFail("EX01_NO_GRAPH")
    (out * torch.from_numpy(w).to(device)).sum().backward()
    grads = []
    for p in model.parameters():
        if p.grad is None:
            raise ProbeFail("EX01_NO_GRAD")
        grads.append(torch_to_np(p.grad, "grad"))
    return grads


def probe_meta_device(mod: Any, input_dim: int, hidden_dims: list[int], output_dim: int, n: int) -> dict[str, Any]:
    """Runs the model on the ``meta`` device: catches tensors created on a fixed device."""
    model = _build(mod, input_dim, hidden_dims, output_dim).to("meta")
    try:
        out = model(torch.empty(n, input_dim, device="meta"))
    except (RuntimeError, NotImplementedError) as err:
        if isinstance(err, NotImplementedError) and "meta" not in str(err):
            raise
        raise ProbeFail("EX01_FIXED_DEVICE", error=" ".join(str(err).split())[:160]) from None
    if not isinstance(out, torch.Tensor):
        raise ProbeFail("WRONG_TYPE", call="MLP.forward", got=type_name(out), expected=instance_of("torch.Tensor"))
    return {"device": str(out.device.type), "shape": list(out.shape)}


def probe_forward_sequence(mod: Any, input_dim: int, hidden_dims: list[int], output_dim: int,
                           params: list[np.ndarray], x: np.ndarray) -> np.ndarray:
    """:func:`probe_forward` with ``hidden_dims`` given as a tuple (the contract's ``Sequence[int]``)."""
    model = get(mod, "MLP")(input_dim, tuple(int(h) for h in hidden_dims), output_dim)
    if not isinstance(model, torch.nn.Module):
        raise ProbeFail("WRONG_TYPE", call="MLP(...)", got=type_name(model), expected=instance_of("nn.Module"))
    return _forward_with(model, params, x)


def _forward_with(model: torch.nn.Module, params: list[np.ndarray], x: np.ndarray) -> np.ndarray:
    """``model(x)`` with ``params`` loaded, on the grading device (no autograd)."""
    load_params(model, params, "MLP.parameters()")
    device = DEVICE["torch"]
    model = model.to(device)
    with torch.no_grad():
        out = model(torch.from_numpy(x).to(device))
    return torch_to_np(out, "MLP.forward")
