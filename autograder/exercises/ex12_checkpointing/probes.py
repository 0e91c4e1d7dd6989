"""Probes for ex12_checkpointing: what the student's checkpointing saves and recomputes.

JAX: the probe counts checkpoint equations (the primitive ``jax.checkpoint`` produces, whatever
this JAX version names it) in the jaxpr of the gradient, and residuals with
``jax.ad_checkpoint.print_saved_residuals`` (its printed lines, captured), against the probe's
own plain MLP. PyTorch: the blocks are the probe's modules; each records its index every time
its forward runs, so the order of recomputation in the backward pass shows what was
checkpointed; the probe's own ``saved_tensors_hooks`` count what autograd saved. Each block's run and
each tensor saved is also tallied in the grader's process as it happens (``tally``: ``block_forward``,
``block_recompute`` when it runs inside a backward pass, ``saved``): a write into the worker's log or count
cannot take one back (docs/security.md, "Structural checks"). A block also tallies what it runs under: in the
forward pass, saved-tensor hooks that are neither the probe's nor ``torch.utils.checkpoint``'s
(``block_own_hooks``: hooks of the student's own hide what autograd keeps from the probe's count, and
``save_on_cpu`` keeps it all); in the backward pass, a run with no frame of ``torch.utils.checkpoint`` below it
(``block_rerun_outside``: called from a hook of the student's, not recomputed by checkpoint).
"""

from __future__ import annotations

import contextlib
import io
import sys
import types
from collections.abc import Callable
from typing import Any

import jax
import jax.ad_checkpoint
import jax.numpy as jnp
import numpy as np
import torch
import torch.utils.checkpoint
from torch import nn

from autograder.core.i18n import label
from autograder.probing.tools import (
    DEVICE,
    ProbeFail,
    get,
    instance_of,
    jax_converter,
    subjaxprs,
    tally,
    torch_to_np,
    tree_to_np,
    type_name,
)

# Bound at import, before student code loads.
_asarray = jax_converter()
_jit = jax.jit
_grad = jax.grad
_make_jaxpr = jax.make_jaxpr
_checkpoint = jax.checkpoint
_relu = jax.nn.relu
_sin, _cos, _tanh, _sum, _mean = jnp.sin, jnp.cos, jnp.tanh, jnp.sum, jnp.mean
_tree_map = jax.tree.map
_policies = jax.checkpoint_policies
_print_residuals = jax.ad_checkpoint.print_saved_residuals
_redirect = contextlib.redirect_stdout
_from_numpy = torch.from_numpy
_no_grad = torch.no_grad
_saved_hooks = torch.autograd.graph.saved_tensors_hooks
_torch_ckpt = torch.utils.checkpoint.checkpoint
_torch_tanh = torch.tanh
_Tensor = torch.Tensor
# -1 outside a backward pass; the id of the graph task the autograd engine runs inside one (a recomputation)
_graph_task = torch._C._current_graph_task_id
_getframe = sys._getframe
# the innermost saved-tensor hooks, as (pack, unpack) or None (torch >= 2.0; absent: nothing is judged by them)
_top_hooks = getattr(torch._C._autograd, "_top_saved_tensors_default_hooks", None)


def _code_ids(module: types.ModuleType) -> frozenset[int]:
    """The ids of every code object ``module`` defines (its functions, its classes' methods and what they nest);
    the objects stay alive in the module, so an id is never reused by a student's code."""
    out: set[int] = set()
    todo = [v for v in vars(module).values() if getattr(v, "__module__", None) == module.__name__]
    seen: set[int] = set()
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, types.CodeType):
            out.add(id(obj))
            todo.extend(c for c in obj.co_consts if isinstance(c, types.CodeType))
        elif isinstance(obj, type):
            todo.extend(vars(obj).values())
        elif isinstance(obj, (staticmethod, classmethod)):
            todo.append(obj.__func__)
        elif isinstance(obj, property):
            todo.extend(f for f in (obj.fget, obj.fset, obj.fdel) if f is not None)
        elif isinstance(obj, types.FunctionType):
            todo.append(obj.__code__)
    return frozenset(out)


# every code object of torch.utils.checkpoint: its hooks' pack/unpack, the function a recomputation runs from
_CKPT_CODES = _code_ids(torch.utils.checkpoint)


def _checkpoint_names() -> frozenset[str]:
    """The primitive name(s) of ``jax.checkpoint`` in this JAX (``remat2``, ``checkpoint``, ...)."""
    closed = _make_jaxpr(_checkpoint(lambda v: v * 2.0))(1.0)
    return frozenset(str(e.primitive.name) for e in closed.jaxpr.eqns)


CHECKPOINT_PRIMITIVES = _checkpoint_names()


def count_checkpoints(jaxpr: Any) -> int:
    """Checkpoint equations in a jaxpr and all its sub-jaxprs."""
    count, stack = 0, [jaxpr]
    while stack:
        j = stack.pop()
        for eqn in j.eqns:
            count += int(str(eqn.primitive.name) in CHECKPOINT_PRIMITIVES)
            for v in eqn.params.values():
                stack.extend(subjaxprs(v))
    return count


def residuals(f: Callable, *args: Any) -> int:
    """How many lines ``print_saved_residuals(f, *args)`` prints (one per residual)."""
    printed = io.StringIO()
    with _redirect(printed):
        _print_residuals(f, *args)
    return len([line for line in printed.getvalue().split("\n") if line.strip()])


# ----------------------------------------------------------------------------- JAX: the MLP
def _params(params: dict[str, list[np.ndarray]]) -> dict[str, list[jax.Array]]:
    return {"W": [_asarray(w) for w in params["W"]], "b": [_asarray(b) for b in params["b"]]}


def plain_forward(params: dict, x: jax.Array) -> jax.Array:
    """Exercise 04's ``mlp_forward``, without checkpoints (what the student's must save less than)."""
    h = x
    n = len(params["W"])
    for i in range(n):
        h = h @ params["W"][i] + params["b"][i]
        if i < n - 1:
            h = _relu(h)
    return h


def _student_forward(mod: Any) -> Callable:
    fn = get(mod, "checkpointed_mlp_forward")
    return lambda p, x: fn(p, x)


def _loss(forward: Callable) -> Callable:
    def loss(p: dict, x: jax.Array, y: jax.Array) -> jax.Array:
        out = forward(p, x)
        return _mean((out - y) ** 2)

    return loss


def _logits(out: Any, n: int, d: int, call: str) -> np.ndarray:
    arr = tree_to_np(out, call)
    if arr.shape != (n, d):
        raise ProbeFail("EX12_FORWARD_SHAPE", got=str(arr.shape), want=str((n, d)))
    return arr


def probe_forward(mod: Any, params: dict, x: np.ndarray) -> np.ndarray:
    """``checkpointed_mlp_forward(params, x)`` called as it is (no jit)."""
    out = _student_forward(mod)(_params(params), _asarray(x))
    return _logits(out, x.shape[0], params["W"][-1].shape[1], "checkpointed_mlp_forward(params, x)")


def probe_grads(mod: Any, params: dict, x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """``jax.jit`` of the forward and of ``jax.grad`` of a squared error through it."""
    forward = _student_forward(mod)
    p, xs, ys = _params(params), _asarray(x), _asarray(y)
    out = _logits(_jit(forward)(p, xs), x.shape[0], params["W"][-1].shape[1],
                  "jax.jit(checkpointed_mlp_forward)(params, x)")
    grads = _jit(_grad(_loss(forward)))(p, xs, ys)
    return {"jit": out, "grads": tree_to_np(grads, "jax.grad(loss)(params)")}


def probe_remat_count(mod: Any, params: dict, x: np.ndarray, y: np.ndarray) -> dict[str, int]:
    """Checkpoint equations in the jaxpr of the gradient (recursively), and the number of layers."""
    closed = _make_jaxpr(_grad(_loss(_student_forward(mod))))(_params(params), _asarray(x), _asarray(y))
    return {"checkpoints": count_checkpoints(closed.jaxpr), "layers": len(params["W"])}


def probe_residuals(mod: Any, params: dict, x: np.ndarray) -> dict[str, int]:
    """Residuals saved to differentiate the student's forward and the plain one, w.r.t. (params, x)."""
    p, xs = _params(params), _asarray(x)
    return {"student": residuals(_student_forward(mod), p, xs), "plain": residuals(plain_forward, p, xs)}


# ----------------------------------------------------------------------------- saved_residual_count
def _r_sin_cos(x: jax.Array) -> jax.Array:
    return _sin(_cos(x))


def _r_two_args(x: jax.Array, y: jax.Array) -> jax.Array:
    return _sum(_sin(x) * y + _tanh(x * y))


def _r_mlp_ckpt(params: dict, x: jax.Array) -> jax.Array:
    h = x
    n = len(params["W"])
    for i in range(n):
        def layer(h: jax.Array, w: jax.Array, b: jax.Array, last: bool = i == n - 1) -> jax.Array:
            z = h @ w + b
            return z if last else _relu(z)

        h = _checkpoint(layer)(h, params["W"][i], params["b"][i])
    return h


RESIDUAL_FNS: dict[str, Callable[..., Any]] = {
    "sin_cos": _r_sin_cos,
    "sin_cos_ckpt": _checkpoint(_r_sin_cos),
    "two_args": _r_two_args,
    "mlp": plain_forward,
    "mlp_ckpt": _r_mlp_ckpt,
    "mlp_dots": _checkpoint(plain_forward, policy=_policies.dots_saveable),
}


def probe_residual_count(mod: Any, fn: str, args: list[Any]) -> int:
    """``saved_residual_count(RESIDUAL_FNS[fn], *args)`` (args: arrays or MLP params dicts)."""
    conv = [_params(a) if isinstance(a, dict) else _asarray(a) for a in args]
    out = get(mod, "saved_residual_count")(RESIDUAL_FNS[fn], *conv)
    if type(out) is not int:
        raise ProbeFail("WRONG_TYPE", call="saved_residual_count(f, *args)", got=type_name(out),
                        expected=label("value.python_int"))
    return out


# ----------------------------------------------------------------------------- PyTorch blocks
class Block(nn.Module):
    """``tanh(linear(h))`` that logs its index each time its forward runs."""

    def __init__(self, index: int, w: np.ndarray, b: np.ndarray, log: list[int]) -> None:
        super().__init__()
        self.index = index
        self.log = log
        self.lin = nn.Linear(w.shape[1], w.shape[0])
        with _no_grad():
            self.lin.weight.copy_(_from_numpy(np.array(w, dtype=np.float32)))
            self.lin.bias.copy_(_from_numpy(np.array(b, dtype=np.float32)))

    def forward(self, h: torch.Tensor, _tally: Any = tally, _task: Any = _graph_task) -> torch.Tensor:
        self.log.append(self.index)
        if _task() == -1:
            _tally("block_forward")
            if not _hooks_are_checkpoints_or_the_probes():
                _tally("block_own_hooks")
        else:
            _tally("block_recompute")
            if not _run_by_checkpoint():
                _tally("block_rerun_outside")
        return _torch_tanh(self.lin(h))


def _hooks_are_checkpoints_or_the_probes(_top: Any = _top_hooks, _codes: frozenset[int] = _CKPT_CODES) -> bool:
    """Whether the innermost saved-tensor hooks are the probe's own counter or ``torch.utils.checkpoint``'s (both of
    the pair: a pack of checkpoint's beside an unpack of the student's is the student's). None at all: a thread of
    the student's, which the probe's hooks (kept per thread by torch) do not reach."""
    try:
        top = _top(False)
    except TypeError:  # absent (None) or another signature in this torch: nothing to judge by
        return True
    if top is None:  # the probe's own are pushed around every block it watches: this is another thread
        return False
    pack, unpack = top
    if type(pack) is types.MethodType and pack.__func__ is _Counter.pack and unpack is _Counter.unpack:
        return True
    return all(type(f) is types.FunctionType and id(f.__code__) in _codes for f in (pack, unpack))


def _run_by_checkpoint(_frame: Any = _getframe, _codes: frozenset[int] = _CKPT_CODES) -> bool:
    """Whether a frame of ``torch.utils.checkpoint``'s own code is below this block's run (its recomputation, with
    or without reentry), not a student's hook calling the block during the backward pass."""
    f = _frame(2)
    while f is not None:
        if id(f.f_code) in _codes:
            return True
        f = f.f_back
    return False


def _blocks(weights: list[np.ndarray], log: list[int]) -> list[Block]:
    device = DEVICE["torch"]
    return [Block(i, w, b, log).to(device) for i, (w, b) in enumerate(zip(weights[0::2], weights[1::2], strict=True))]


def _tensor(a: np.ndarray, grad: bool = False) -> torch.Tensor:
    return _from_numpy(np.array(a, dtype=np.float32)).to(DEVICE["torch"]).requires_grad_(grad)


class _Counter:
    """``saved_tensors_hooks`` that count what autograd packs (and hand it back unchanged), each one also
    tallied in the grader's process (``saved``)."""

    def __init__(self) -> None:
        self.packed = 0

    def pack(self, t: torch.Tensor, _tally: Any = tally) -> torch.Tensor:
        self.packed += 1
        _tally("saved")
        return t

    @staticmethod
    def unpack(t: torch.Tensor) -> torch.Tensor:
        return t


def probe_torch(mod: Any, weights: list[np.ndarray], x: np.ndarray, x_grad: bool, w_out: np.ndarray) -> dict[str, Any]:
    """``torch_checkpointed(blocks, x)``: output, gradients of ``sum(w_out * out)``, forward calls
    during the call and during backward, tensors saved (counted by the probe's own hooks)."""
    log: list[int] = []
    blocks = _blocks(weights, log)
    xt = _tensor(x, x_grad)
    counter = _Counter()
    with _saved_hooks(counter.pack, counter.unpack):
        out = get(mod, "torch_checkpointed")(blocks, xt)
    if not isinstance(out, _Tensor):
        raise ProbeFail("WRONG_TYPE", call="torch_checkpointed(blocks, x)", got=type_name(out),
                        expected=instance_of("torch.Tensor"))
    forward_log = list(log)
    del log[:]
    value = torch_to_np(out, "torch_checkpointed(blocks, x)")
    if not out.requires_grad:
        raise ProbeFail("EX12_TORCH_NO_GRAPH")
    (out * _tensor(w_out)).sum().backward()
    grads = []
    for i, blk in enumerate(blocks):
        for name, p in (("weight", blk.lin.weight), ("bias", blk.lin.bias)):
            if p.grad is None:
                raise ProbeFail("EX12_TORCH_NO_GRAD", what=label("ex12.what.block_param", i=i, name=name))
            grads.append(torch_to_np(p.grad, "p.grad"))
    res: dict[str, Any] = {"out": value, "grads": grads, "forward_log": forward_log, "backward_log": list(log),
                           "saved": counter.packed}
    if x_grad:
        if xt.grad is None:
            raise ProbeFail("EX12_TORCH_NO_GRAD", what=label("ex12.what.input"))
        res["x_grad"] = torch_to_np(xt.grad, "x.grad")
    return res


def probe_torch_plain_saved(mod: Any, weights: list[np.ndarray], x: np.ndarray, x_grad: bool) -> int:
    """Tensors saved when the same blocks are applied plainly (no student code: the bar to beat)."""
    blocks = _blocks(weights, [])
    counter = _Counter()
    with _saved_hooks(counter.pack, counter.unpack):
        h = _tensor(x, x_grad)
        for blk in blocks:
            h = blk(h)
    return counter.packed


# ----------------------------------------------------------------------------- torch_saved_tensor_count
def _graph_fns(a: torch.Tensor, b: torch.Tensor, blocks: list[Block]) -> dict[str, Callable[[], torch.Tensor]]:
    """Graph builders over leaves ``a`` (requires grad) and ``b`` (does not, unless made to)."""
    return {
        "mul_sin": lambda: torch.sin(a * b).sum(),
        "square": lambda: (a * a).sum(),
        "chain": lambda: torch.tanh(torch.exp(a) * 2.0 + b).pow(3).sum(),
        "no_grad_inputs": lambda: (b * b + 1.0).sum(),
        "blocks": lambda: blocks[1](blocks[0](a)).sum(),
        "checkpointed": lambda: _torch_ckpt(blocks[0], a, use_reentrant=False).sum(),
    }


def probe_saved_count(mod: Any, fn: str, a: np.ndarray, b: np.ndarray, weights: list[np.ndarray]) -> dict[str, Any]:
    """``torch_saved_tensor_count(fn)``, then backward through the graph ``fn`` built (the hooks
    must have handed the tensors back): the count and the gradient of ``a``."""
    at, bt = _tensor(a, True), _tensor(b)
    built: list[torch.Tensor] = []
    graph = _graph_fns(at, bt, _blocks(weights, []))[fn]

    def call() -> torch.Tensor:
        out = graph()
        built.append(out)
        return out

    count = get(mod, "torch_saved_tensor_count")(call)
    if type(count) is not int:
        raise ProbeFail("WRONG_TYPE", call="torch_saved_tensor_count(fn)", got=type_name(count),
                        expected=label("value.python_int"))
    if len(built) != 1:
        raise ProbeFail("EX12_FN_CALLS", calls=len(built))
    res: dict[str, Any] = {"count": count}
    if built[0].requires_grad:
        try:
            built[0].backward()
        except RuntimeError as err:
            raise ProbeFail("EX12_HOOKS_BROKE_GRAPH", error=" ".join(str(err).split())[:160]) from None
        res["grad"] = torch_to_np(at.grad, "a.grad") if at.grad is not None else None
    return res
