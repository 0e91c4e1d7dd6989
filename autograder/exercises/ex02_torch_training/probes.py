"""Probes for ex02_torch_training: call the student's loss and loop pieces, measure.

The model handed to `train_step`, `evaluate` and `fit` is built here (a ReLU
MLP with the weights the grader sent), never taken from the student's ex01, so
this exercise's points depend on this exercise only. Its forward records the
mode flags and whether autograd was recording, which is how `model.train()`,
`model.eval()` and `torch.no_grad()` are observed. The loss handed to
`train_step`/`evaluate` is also defined here and counts its calls.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from autograder.core.i18n import label
from autograder.probing.tools import DEVICE, ProbeFail, get, instance_of, torch_to_np, type_name
from autograder.probing.torch_family import StepRecorder, put_gradients, torch_optimizer

# Bound before any student code loads.
_from_numpy = torch.from_numpy
_no_grad = torch.no_grad
_is_grad_enabled = torch.is_grad_enabled
_softplus = torch.nn.functional.softplus
_linear = torch.nn.functional.linear
_relu = torch.relu
_mean = torch.mean
_sigmoid = torch.sigmoid
_SGD = torch.optim.SGD
_Tensor = torch.Tensor
_BANNED = "binary_cross_entropy_with_logits"


def _tensor(a: np.ndarray) -> torch.Tensor:
    return _from_numpy(np.array(a, dtype=np.float32)).to(DEVICE["torch"])


class _Net(nn.Module):
    """The reference MLP (ReLU between layers, logits out) that records, per forward,
    ``(every module in training mode, any module in training mode, grad enabled)``."""

    def __init__(self, params: list[np.ndarray]) -> None:
        super().__init__()
        self.layers = nn.ModuleList()
        for w, b in zip(params[0::2], params[1::2], strict=True):
            layer = nn.Linear(w.shape[1], w.shape[0])
            with _no_grad():
                layer.weight.copy_(_from_numpy(np.array(w, dtype=np.float32)))
                layer.bias.copy_(_from_numpy(np.array(b, dtype=np.float32)))
            self.layers.append(layer)
        self.log: list[tuple[bool, bool, bool]] = []
        self.recording = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.recording:
            flags = [bool(m.training) for m in self.modules()]
            self.log.append((all(flags), any(flags), bool(_is_grad_enabled())))
        for layer in self.layers[:-1]:
            x = _relu(_linear(x, layer.weight, layer.bias))
        last = self.layers[-1]
        return _linear(x, last.weight, last.bias)


def _net(params: list[np.ndarray]) -> _Net:
    return _Net(params).to(DEVICE["torch"])


class _CountingBCE:
    """A stable BCE-with-logits loss (the probe's own) that counts its calls; ``scale`` multiplies it (and so
    every gradient)."""

    def __init__(self, scale: float = 1.0) -> None:
        self.calls = 0
        self.scale = float(scale)

    def __call__(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        loss = _mean(_softplus(logits) - logits * targets)
        return loss * self.scale if self.scale != 1.0 else loss


def _plain_loss(model: _Net, x: torch.Tensor, y: torch.Tensor) -> float:
    """The probe's loss of the model's current parameters (no recording, no graph)."""
    model.recording = False
    try:
        with _no_grad():
            return float(_CountingBCE()(model(x), y).item())
    finally:
        model.recording = True


def _params_np(model: nn.Module) -> list[np.ndarray]:
    return [torch_to_np(p, "model.parameters()") for p in model.parameters()]


class _FunctionSpy(TorchFunctionMode):
    """Records torch functions called whose name is the built-in BCE-with-logits."""

    def __init__(self) -> None:
        super().__init__()
        self.hits: list[str] = []

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        name = getattr(func, "__name__", "") or ""
        if _BANNED in name:
            self.hits.append(f"{getattr(func, '__module__', '') or 'torch'}.{name}")
        return func(*args, **(kwargs or {}))


class _DispatchSpy(TorchDispatchMode):
    """Records the ATen op of the built-in, however it was reached."""

    def __init__(self) -> None:
        super().__init__()
        self.hits: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        name = str(func)
        if _BANNED in name:
            self.hits.append(name)
        return func(*args, **(kwargs or {}))


def _builtin_nodes(out: torch.Tensor, _limit: int = 100_000) -> list[str]:
    """The built-in's backward nodes anywhere in ``out``'s autograd graph (class names, read from torch's own
    node types: a custom Function's node class is torch's, not the student's class)."""
    hits: list[str] = []
    seen: set[int] = set()
    todo = [out.grad_fn]
    while todo and len(seen) < _limit:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        name = type(node).__name__
        if "BinaryCrossEntropyWithLogits" in name:
            hits.append(f"autograd.{name}")
        todo.extend(fn for fn, _ in node.next_functions)
    return hits


def probe_bce(mod: Any, logits: np.ndarray, targets: np.ndarray, grad: bool = False) -> dict[str, Any]:
    """``bce_with_logits(logits, targets)`` (and optionally its gradient w.r.t. the logits).

    The call runs under a torch-function mode and a dispatch mode that record any
    use of the built-in BCE-with-logits (``F.binary_cross_entropy_with_logits``,
    ``nn.BCEWithLogitsLoss``, ``torch.binary_cross_entropy_with_logits`` or the
    ATen op, whatever name it was imported under).

    Returns:
        ``{"loss": 0-d array, "builtin": [names called], "grad": array (if asked)}``.
    """
    fn = get(mod, "bce_with_logits")
    z = _tensor(logits).requires_grad_(grad)
    y = _tensor(targets)
    fspy, dspy = _FunctionSpy(), _DispatchSpy()
    with fspy, dspy:
        out = fn(z, y)
    loss = torch_to_np(out, "bce_with_logits(logits, targets)")
    result: dict[str, Any] = {"loss": loss, "builtin": sorted(set(fspy.hits + dspy.hits))}
    if grad:
        if not isinstance(out, _Tensor) or out.grad_fn is None:
            raise ProbeFail("EX02_BCE_NO_GRAPH")
        if out.numel() != 1:
            raise ProbeFail("EX02_BCE_NOT_SCALAR", shape=tuple(out.shape))
        # the spies watch this thread only (torch keeps its modes per thread): the graph holds the built-in's
        # backward node whichever thread ran it
        result["builtin"] = sorted({*result["builtin"], *_builtin_nodes(out)})
        out.backward()
        if z.grad is None:
            raise ProbeFail("EX02_BCE_NO_GRAPH")
        result["grad"] = torch_to_np(z.grad, "logits.grad")
    return result


def _float_result(x: Any, call: str) -> float:
    if type(x) is float or type(x) is int:
        return float(x)
    raise ProbeFail("EX02_NOT_FLOAT", call=call, got=type_name(x))


def _lenient_float(x: Any) -> tuple[float, str]:
    """``(value, "")`` for a Python float/int, ``(nan, type description)`` otherwise."""
    if type(x) is float or type(x) is int:
        return float(x), ""
    return float("nan"), type_name(x)


def probe_train_step(mod: Any, params: list[np.ndarray], x: np.ndarray, y: np.ndarray, lr: float,
                     steps: int = 2, start_mode: str = "train") -> dict[str, Any]:
    """``steps`` calls of ``train_step`` with SGD(lr) and the probe's counting BCE.

    Returns:
        ``{"losses": returned floats (nan where not a float), "bad_type": "" or the type
        of the first non-float returned, "post_update": the probe's loss after each call,
        "params": parameters after each call, "loss_fn_calls": int, "modes": [all modules
        in training mode, per forward call]}``.
    """
    fn = get(mod, "train_step")
    model = _net(params)
    model.train(start_mode == "train")
    opt = _SGD(model.parameters(), lr=lr)
    loss_fn = _CountingBCE()
    xt, yt = _tensor(x), _tensor(y)
    losses, bad, post, after = [], [], [], []
    for _ in range(steps):
        value, problem = _lenient_float(fn(model, opt, xt, yt, loss_fn))
        losses.append(value)
        bad.append(problem)
        post.append(_plain_loss(model, xt, yt))
        after.append(_params_np(model))
    return {"losses": losses, "bad_type": next((b for b in bad if b), ""), "post_update": post,
            "params": after, "loss_fn_calls": loss_fn.calls, "modes": [entry[0] for entry in model.log]}


def probe_evaluate(mod: Any, params: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """``evaluate`` on a model left in training mode.

    Returns:
        ``{"loss", "accuracy": floats (nan when not floats), "bad_return": "" or what came
        back instead of two floats, "loss_fn_calls": int, "any_training": [...],
        "grad_enabled": [...]}`` (the last two per forward call).
    """
    fn = get(mod, "evaluate")
    model = _net(params)
    model.train()
    loss_fn = _CountingBCE()
    out = fn(model, _tensor(x), _tensor(y), loss_fn)
    result: dict[str, Any] = {"loss": float("nan"), "accuracy": float("nan"), "bad_return": "",
                              "loss_fn_calls": loss_fn.calls, "any_training": [e[1] for e in model.log],
                              "grad_enabled": [e[2] for e in model.log]}
    if type(out) not in (tuple, list) or len(out) != 2:
        result["bad_return"] = type_name(out)
        return result
    (loss, bad_loss), (acc, bad_acc) = _lenient_float(out[0]), _lenient_float(out[1])
    result.update(loss=loss, accuracy=acc)
    if bad_loss or bad_acc:
        result["bad_return"] = label("value.pair", first=bad_loss or instance_of("float"), second=bad_acc or instance_of("float"))
    return result


def probe_fit(mod: Any, params: list[np.ndarray], x: np.ndarray, y: np.ndarray, epochs: int, lr: float,
              x_val: np.ndarray | None = None, y_val: np.ndarray | None = None) -> dict[str, Any]:
    """``fit(model, x, y, epochs=epochs, lr=lr)`` from the given weights.

    Returns:
        ``{"losses": the returned floats, "optimizers": what stepped during fit (class, settings,
        whether it holds the model's parameters, steps: ``StepRecorder.summary``), "val_accuracy":
        accuracy of the trained model on (x_val, y_val) measured by the probe (when given)}``.
    """
    fn = get(mod, "fit")
    model = _net(params)
    model.recording = False
    with StepRecorder() as recorder:
        out = fn(model, _tensor(x), _tensor(y), epochs=epochs, lr=lr)
    if type(out) not in (list, tuple):
        raise ProbeFail("EX02_FIT_RETURN", got=type_name(out))
    losses = [_float_result(v, "fit(...)[i]") for v in out]
    result: dict[str, Any] = {"losses": losses, "optimizers": recorder.summary(model)}
    if x_val is not None and y_val is not None:
        yv = _tensor(y_val)
        model.eval()
        with _no_grad():
            pred = (_sigmoid(model(_tensor(x_val))) >= 0.5).to(yv.dtype)
            result["val_accuracy"] = float((pred == yv).float().mean().item())
    return result



def probe_train_step_with(mod: Any, params: list[np.ndarray], x: np.ndarray, y: np.ndarray, optimizer: dict[str, Any],
                          steps: int, stale: list[np.ndarray] | None = None,
                          loss_scale: float = 1.0) -> dict[str, Any]:
    """``steps`` calls of ``train_step`` with the optimizer a spec of ``autograder.probing.families`` names.

    With ``stale``, those gradients are left on the parameters before the first call (as an earlier
    ``backward()`` would leave them): ``train_step`` must clear them before its own ``backward()``.
    ``loss_scale`` multiplies the loss it is given, so its gradients too (large ones: none is clipped).

    Returns:
        ``{"losses": returned floats (nan where not a float), "params": parameters after each call,
        "loss_fn_calls": calls of the loss it was given}``.
    """
    fn = get(mod, "train_step")
    model = _net(params)
    model.recording = False
    opt = torch_optimizer(optimizer, model.parameters())
    if stale is not None:
        put_gradients(model, stale)
    xt, yt = _tensor(x), _tensor(y)
    losses, after, calls = [], [], 0
    for _ in range(steps):
        loss_fn = _CountingBCE(loss_scale)
        losses.append(_lenient_float(fn(model, opt, xt, yt, loss_fn))[0])
        after.append(_params_np(model))
        calls += loss_fn.calls
    return {"losses": losses, "params": after, "loss_fn_calls": calls}
