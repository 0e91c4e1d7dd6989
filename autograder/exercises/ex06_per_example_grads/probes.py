"""Probes for ex06_per_example_grads: per-example gradients in JAX (vmap) and torch (torch.func).

The loss functions and the torch model live here (picked by name from the
grader's kwargs), so the student's code is called on inputs it cannot
special-case.
"""

from __future__ import annotations

import itertools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import torch
from torch import nn

from autograder.core.i18n import label
from autograder.probing.tools import (
    DEVICE,
    ProbeFail,
    get,
    instance_of,
    jax_converter,
    qualified_type,
    sealed,
    tally,
    torch_to_np,
    tree_to_np,
    type_name,
)

# Bound at import, before student code can patch anything.
_jit = jax.jit
# the text the grader reads and the program run, from JAX's own methods taken at import: a student's code
# that patches jax.stages.Lowered afterwards does not choose what the grader reads
_as_text, _compile = jax.stages.Lowered.as_text, jax.stages.Lowered.compile
_tree_map = jax.tree.map
_asarray = jax_converter()
_relu = jax.nn.relu
_log_softmax = jax.nn.log_softmax
_take_along_axis = jnp.take_along_axis
_tanh = jnp.tanh
_mean = jnp.mean
_maximum = jnp.maximum
_log1p = jnp.log1p
_exp = jnp.exp
_abs = jnp.abs
_cross_entropy = torch.nn.functional.cross_entropy
_mse_loss = torch.nn.functional.mse_loss
_torch_from_numpy = torch.from_numpy
_np_array_equal = np.array_equal
_torch_tanh = torch.tanh


# ----------------------------------------------------------------- JAX losses
def loss_bce(params: dict, x: jax.Array, y: jax.Array) -> jax.Array:
    """Exercise 04's MLP + stable BCE: params {"W": [...], "b": [...]}, y (B,) of 0/1."""
    h = x
    n = len(params["W"])
    for i in range(n - 1):
        h = _relu(h @ params["W"][i] + params["b"][i])
    z = (h @ params["W"][n - 1] + params["b"][n - 1])[:, 0]
    return _mean(_maximum(z, 0.0) - z * y + _log1p(_exp(-_abs(z))))


def loss_softmax(params: dict, x: jax.Array, y: jax.Array) -> jax.Array:
    """Another pytree: {"hidden": {"kernel", "bias"}, "out": (w, b)}; y (B,) int labels."""
    h = _tanh(x @ params["hidden"]["kernel"] + params["hidden"]["bias"])
    w, b = params["out"]
    logp = _log_softmax(h @ w + b)
    return -_mean(_take_along_axis(logp, y[:, None], axis=1))


LOSSES = {"bce": loss_bce, "softmax": loss_softmax}


def _jax_tree(tree: Any) -> Any:
    return _tree_map(_asarray, tree)


# ------------------------------------------------------------------ JAX probes
def jit_or_eager(fn: Any, *args: Any) -> Any:
    """``jax.jit(fn)(*args)``, or ``fn(*args)`` when the function cannot be traced.

    Compiling once is much cheaper than eager op-by-op dispatch on CPU; the
    eager fallback keeps value checks independent of jit-ability (a check of
    its own).
    """
    try:
        return _jit(fn)(*args)
    except Exception:  # noqa: BLE001 - any tracing problem: measure eagerly instead
        return fn(*args)


def probe_per_example(mod: Any, loss: str, params: Any, x: np.ndarray, y: np.ndarray) -> Any:
    """`per_example_grads(loss_fn, params, x, y)` as numpy (compiled when it traces, else eager)."""
    fn = get(mod, "per_example_grads")
    loss_fn = LOSSES[loss]
    out = jit_or_eager(lambda p, a, b: fn(loss_fn, p, a, b), _jax_tree(params), _asarray(x), _asarray(y))
    return tree_to_np(out, "per_example_grads")


def probe_pe_program(mod: Any, loss: str, params: Any, x_small: np.ndarray, y_small: np.ndarray,
                     x_large: np.ndarray, y_large: np.ndarray, _get: Any = get, _jit: Any = _jit,
                     _as_text: Any = _as_text, _compile: Any = _compile, _str: type = str, _list: type = list,
                     ) -> dict[str, Any]:
    """The program JAX lowers for the traced function at two batch sizes, as StableHLO text (the grader
    reads it: autograder.probing.artefact), and the outputs of that same lowering, compiled and run.

    What chooses the function lowered and reads its text is held in default arguments (a module name,
    rebound and put back by the replacement itself, would leave no trace; a function's defaults cannot
    be replaced in a student's worker)."""
    fn = _get(mod, "per_example_grads")
    loss_fn = LOSSES[loss]

    def closure(p: Any, a: jax.Array, b: jax.Array) -> Any:
        return fn(loss_fn, p, a, b)

    # texts in a tuple, rebound: code that reaches this frame (a gc callback, a signal handler, another thread,
    # after the student's last call) reads it but cannot change it; the list is made in the return itself
    texts: tuple[str, ...] = ()
    outs = []
    for xs, ys in ((x_small, y_small), (x_large, y_large)):
        args = (_jax_tree(params), _asarray(xs), _asarray(ys))
        lowered = _jit(closure).lower(*args)
        texts += (_str(_as_text(lowered)),)
        outs.append(tree_to_np(_compile(lowered)(*args), "per_example_grads"))
    return {"programs": _list(texts), "sizes": [int(x_small.shape[0]), int(x_large.shape[0])], "outs": outs}


def _fingerprint(tree: Any) -> Any:
    """Identity of every container and leaf of a pytree (catches in-place changes), in tuples the student's code
    cannot rewrite through the probe's frame. Each entry also holds its object, last: while it is alive its id
    cannot be handed to a new object (a leaf deleted, then one made in its place), and two fingerprints compare
    by the ids before they reach it (then by identity)."""
    if isinstance(tree, dict):
        return ("dict", id(tree), tuple((k, _fingerprint(v)) for k, v in tree.items()), tree)
    if type(tree) in (list, tuple):
        return (type(tree).__name__, id(tree), tuple(_fingerprint(v) for v in tree), tree)
    return ("leaf", id(tree), tree)


def probe_pe_pure(mod: Any, loss: str, params: Any, x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """The call inside `jax.jit`, with the caller's `params` pytree closed over: was it changed in place?"""
    fn = get(mod, "per_example_grads")
    loss_fn = LOSSES[loss]
    p = _jax_tree(params)
    before = _fingerprint(p)
    out = _jit(lambda a, b: fn(loss_fn, p, a, b))(_asarray(x), _asarray(y))
    return {"mutated": bool(_fingerprint(p) != before), "jit": tree_to_np(out, "jax.jit(per_example_grads)")}


def probe_clip(mod: Any, per_example: Any, max_norm: float) -> Any:
    """`clip_and_average(per_example, max_norm)` as numpy (compiled when it traces, else eager)."""
    fn = get(mod, "clip_and_average")
    m = float(max_norm)
    return tree_to_np(jit_or_eager(lambda t: fn(t, m), _jax_tree(per_example)), "clip_and_average")


# ---------------------------------------------------------------- torch probes
# Every forward of a ProbeNet, ever: an itertools.count (nothing can reset it, unlike a list held by a
# module global, which any code reaching the model's forward.__globals__ could); probes read differences.
# A raw memory write can still rewind it: each forward is also tallied in the grader's process
# (``tally``), and the check reads the larger of the two counts.
_FORWARD_CALLS = itertools.count()
# Every backward pass through a ProbeNet's output (a hook its forward puts on the output: once per pass, under
# torch.func's transforms too), counted and tallied the same way: vmap's one batched pass is one, a Python loop
# of torch.autograd.grad over the examples of one batched forward is one per example.
_BACKWARD_CALLS = itertools.count()
_register_hook = torch.Tensor.register_hook


def _backward_through_output(grad: torch.Tensor, _tally: Any = tally, _calls: Any = _BACKWARD_CALLS) -> None:
    next(_calls)
    _tally("backward")


class ProbeNet(nn.Module):
    """A small MLP with nested parameter names: body.0.weight, body.0.bias, head.weight, head.bias, and a float
    buffer (``gain``, ones: a model's state is more than its parameters, and no gradient is asked of it). Like
    most models (BatchNorm, Flatten...) it takes batches only: ``(N, d)``, one example as ``x[i:i+1]``."""

    def __init__(self, d: int, h: int, k: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d, h))
        self.head = nn.Linear(h, k)
        self.register_buffer("gain", torch.ones(h))

    def forward(self, x: torch.Tensor, _tally: Any = tally, _calls: Any = _FORWARD_CALLS) -> torch.Tensor:
        next(_calls)
        _tally("forward")
        if x.dim() != 2:  # one example without its batch axis (x[i], not x[i:i+1]); inside vmap too
            raise ProbeFail("EX06_TORCH_UNBATCHED", shape=str(tuple(x.shape)))
        out = self.head(_torch_tanh(self.body(x)) * self.gain)
        if out.requires_grad:
            try:
                _register_hook(out, _backward_through_output)
            except RuntimeError:  # a torch whose transforms refuse hooks: the passes go uncounted
                pass
        return out


def _torch_loss(loss: str) -> Any:
    if loss == "xent":
        return lambda out, target: _cross_entropy(out, target)
    return lambda out, target: _mse_loss(out, target)


def _torch_setup(loss: str, params: list[np.ndarray], x: np.ndarray,
                 y: np.ndarray) -> tuple[ProbeNet, Any, torch.Tensor, torch.Tensor]:
    d, h, k = params[0].shape[1], params[0].shape[0], params[2].shape[0]
    model = ProbeNet(d, h, k)
    with torch.no_grad():
        for p, a in zip(model.parameters(), params, strict=True):
            p.copy_(_torch_from_numpy(np.array(a, dtype=np.float32)))
    device = DEVICE["torch"]
    model = model.to(device)
    return model, _torch_loss(loss), _torch_from_numpy(x).to(device), _torch_from_numpy(y).to(device)


def _torch_result(out: Any) -> dict[str, np.ndarray]:
    call = "torch_per_example_grads"
    if not isinstance(out, dict):
        raise ProbeFail("WRONG_TYPE", call=call, got=type_name(out), expected=instance_of("dict[str, torch.Tensor]"))
    result = {}
    for k, v in out.items():
        if not isinstance(k, str):
            raise ProbeFail("WRONG_TYPE", call=call, got=label("value.dict_key", name=qualified_type(k)), expected=label("value.str_keys"))
        result[k] = torch_to_np(v, call)
    return result


def probe_torch_grads(mod: Any, loss: str, params: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> dict:
    """`torch_per_example_grads(model, loss_fn, x, y)` as {name: numpy}."""
    model, loss_fn, xt, yt = _torch_setup(loss, params, x, y)
    return _torch_result(get(mod, "torch_per_example_grads")(model, loss_fn, xt, yt))


def probe_torch_untouched(mod: Any, loss: str, params: list[np.ndarray], x: np.ndarray,
                          y: np.ndarray) -> dict[str, list[str]]:
    """Names of parameters whose `.grad` got set, and of those changed (values or requires_grad)."""
    model, loss_fn, xt, yt = _torch_setup(loss, params, x, y)
    named = tuple(model.named_parameters())
    # read-only copies in a tuple: the student's code can reach the probe's locals through its frame (see sealed)
    before = tuple((sealed(torch_to_np(p, "p")), bool(p.requires_grad)) for _, p in named)
    get(mod, "torch_per_example_grads")(model, loss_fn, xt, yt)
    grad_set = [n for n, p in named if p.grad is not None]
    changed = [n for (n, p), (values, grad) in zip(named, before, strict=True)
               if bool(p.requires_grad) != grad or not _np_array_equal(torch_to_np(p, "p"), values)]
    missing = [n for n, _ in model.named_parameters()] != [n for n, _ in named]
    return {"grad_set": grad_set, "changed": changed + (["(parameter list)"] if missing else [])}


def probe_torch_calls(mod: Any, loss: str, params: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> dict:
    """How many times `model.forward` ran, and backward passes went through its output, for one call on a
    batch of N."""
    model, loss_fn, xt, yt = _torch_setup(loss, params, x, y)
    start, back = next(_FORWARD_CALLS), next(_BACKWARD_CALLS)
    get(mod, "torch_per_example_grads")(model, loss_fn, xt, yt)
    return {"calls": int(next(_FORWARD_CALLS) - start - 1), "backward": int(next(_BACKWARD_CALLS) - back - 1),
            "n": int(x.shape[0])}
