"""Probes for ex10_bridge: move weights with the student's bridge, run models written here.

Everything the bridge is checked against lives in this module: a torch MLP
(``nn.Sequential`` of ``Linear``/``ReLU``), a JAX forward (``x @ W + b``,
relu between layers), a Flax ``Conv``, and the reference training loops of
ex02 (PyTorch: Adam, stable BCE with logits, full batch) and ex05 (JAX:
``optax.adam``, jitted step). Nothing here imports the student's other
exercises or the reference solutions, so ex10's points depend on ex10 alone.

The two memory probes (``to_jax_then_train``, ``to_torch_leaves``) run torch and JAX on the host's CPU
whatever the run's devices: only there can a JAX array and a torch tensor share one buffer, so only there
is a bridge that shares them seen to (on a TPU or GPU, ``jax.device_put`` of a numpy view is a copy to the
chip, and ``.cpu()`` of a CUDA tensor a copy to the host, so the same code would pass there and fail on a
CPU runtime).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
import torch
from flax import linen

from autograder.core import data as _data
from autograder.core.i18n import label
from autograder.probing.tools import (
    DEVICE,
    ProbeFail,
    get,
    instance_of,
    jax_converter,
    qualified_type,
    sealed,
    torch_to_np,
    tree_to_np,
    type_name,
)

# Bound at import, before student code can patch anything.
_Linear, _ReLU, _Sequential, _Conv2d = torch.nn.Linear, torch.nn.ReLU, torch.nn.Sequential, torch.nn.Conv2d
_Adam = torch.optim.Adam
_no_grad, _Generator, _randn, _from_numpy = torch.no_grad, torch.Generator, torch.randn, torch.from_numpy
_t_relu, _t_abs, _t_log1p, _t_exp, _t_clamp = torch.relu, torch.abs, torch.log1p, torch.exp, torch.clamp
_t_sigmoid = torch.sigmoid
_conv2d = torch.nn.functional.conv2d
_jnp_array, _jnp_maximum = jnp.array, jnp.maximum
_jnp_asarray = jax_converter()
_j_relu = jax.nn.relu
_j_log1p, _j_exp, _j_abs, _j_mean = jnp.log1p, jnp.exp, jnp.abs, jnp.mean
_jit, _value_and_grad = jax.jit, jax.value_and_grad
_default_device, _jax_devices = jax.default_device, jax.devices
_adam, _apply_updates = optax.adam, optax.apply_updates
_JaxArray = jax.Array
_np_array = np.array

_MOONS = _data.load("moons")


# ---------------------------------------------------------------- models built here
def torch_mlp(dims: list[int], weights: list[np.ndarray] | None = None, seed: int = 0,
              device: str | None = None) -> torch.nn.Module:
    """``nn.Sequential(Linear, ReLU, ..., Linear)`` on the grading device.

    Args:
        dims: ``[d_0, ..., d_L]``.
        weights: ``[W_0 (d_1, d_0), b_0, ...]`` in torch layout; None fills from ``seed``.
        seed: seed of the filler values when ``weights`` is None.
        device: torch's device for it; None: the run's (``DEVICE["torch"]``).
    """
    layers: list[torch.nn.Module] = []
    for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
        layers.append(_Linear(int(a), int(b)))
        if i < len(dims) - 2:
            layers.append(_ReLU())
    model = _Sequential(*layers)
    return _filled(model, weights, seed, device)



def _filled(model: torch.nn.Module, weights: list | None, seed: int, device: str | None = None) -> torch.nn.Module:
    """``model`` with its parameters (in ``parameters()`` order) set to ``weights``, or drawn from ``seed``
    (0.3 x a standard normal) when None; on ``device`` (None: the grading device)."""
    gen = _Generator().manual_seed(int(seed))
    with _no_grad():
        for k, p in enumerate(model.parameters()):
            src = _from_numpy(_np_array(weights[k], dtype=np.float32)) if weights is not None \
                else 0.3 * _randn(p.shape, generator=gen)
            p.copy_(src)
    return model.to(device or DEVICE["torch"])

class _NamedMLP(torch.nn.Module):
    """An MLP whose Linear layers are attributes ``fc0, fc1, ...`` (not iterable, not indexable)."""

    def __init__(self, dims: list[int]) -> None:
        super().__init__()
        self.n = len(dims) - 1
        for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
            setattr(self, f"fc{i}", _Linear(int(a), int(b)))
        self.act = _ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i in range(self.n):
            x = getattr(self, f"fc{i}")(x)
            if i < self.n - 1:
                x = self.act(x)
        return x


class _NestedMLP(torch.nn.Module):
    """An MLP whose hidden Linear layers sit inside blocks of a ModuleList, the last one beside it."""

    def __init__(self, dims: list[int]) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList(_Sequential(_Linear(int(a), int(b)), _ReLU())
                                          for a, b in zip(dims[:-2], dims[1:-1]))
        self.head = _Linear(int(dims[-2]), int(dims[-1]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.head(x)


MODEL_KINDS = {"attributes": _NamedMLP, "nested": _NestedMLP}


def torch_model(dims: list[int], kind: str = "sequential", weights: list[np.ndarray] | None = None,
                seed: int = 0) -> torch.nn.Module:
    """:func:`torch_mlp` (``kind`` "sequential"), or the same MLP written as another module (``kind``
    "attributes" or "nested": its Linear layers in ``modules()`` order, parameters in the same order)."""
    if kind == "sequential":
        return torch_mlp(dims, weights, seed)
    model = MODEL_KINDS[kind](dims)
    return _filled(model, weights, seed)


def jax_forward(params: dict, x: Any) -> Any:
    """The JAX MLP: ``x @ W + b``, relu between layers, logits out."""
    n = len(params["W"])
    for i, (w, b) in enumerate(zip(params["W"], params["b"])):
        x = x @ w + b
        if i < n - 1:
            x = _j_relu(x)
    return x


# The probes' own JAX forward, compiled: one program per params/input shape instead of one per eager op
# and layer (matmul, add, relu: ~7 per call on each side).
_jax_forward_jit = _jit(jax_forward)


def jax_params(params: dict) -> dict:
    """Numpy ``{"W": [...], "b": [...]}`` (as sent) -> float32 jax arrays."""
    return {"W": [_jnp_asarray(_np_array(w, dtype=np.float32)) for w in params["W"]],
            "b": [_jnp_asarray(_np_array(b, dtype=np.float32)) for b in params["b"]]}


def _torch_x(x: np.ndarray, device: str | None = None) -> torch.Tensor:
    return _from_numpy(_np_array(x, dtype=np.float32)).to(device or DEVICE["torch"])


@contextlib.contextmanager
def _on_host() -> Iterator[str]:
    """Torch's and JAX's arrays made inside on the host's CPU (JAX's first CPU device as the default one);
    yields torch's device, ``"cpu"``. The worker keeps a CPU device beside any accelerator
    (``autograder.workers.worker``)."""
    with _default_device(_jax_devices("cpu")[0]):
        yield "cpu"


def _student_tree(value: Any, call: str) -> dict:
    """Checks the shape of the pytree (dict with lists "W" and "b" of jax arrays)."""
    if not isinstance(value, dict):
        raise ProbeFail("WRONG_TYPE", call=call, got=type_name(value), expected=instance_of('{"W": [...], "b": [...]}'))
    if set(value) != {"W", "b"} or not all(type(value[k]) in (list, tuple) for k in ("W", "b")):
        raise ProbeFail("EX10_TREE", call=call, got=", ".join(f"{k!r}: `{qualified_type(v)}`" for k, v in value.items()))
    for leaf in [*value["W"], *value["b"]]:
        if not isinstance(leaf, _JaxArray):
            raise ProbeFail("WRONG_TYPE", call=call, got=type_name(leaf),
                            expected=label("value.leaves", code="jax.Array", use="jnp.array(...)"))
    return {"W": list(value["W"]), "b": list(value["b"])}


def _shapes_ok(params: dict, dims: list[int]) -> bool:
    want = [(a, b) for a, b in zip(dims[:-1], dims[1:])]
    return (len(params["W"]) == len(params["b"]) == len(want)
            and [tuple(w.shape) for w in params["W"]] == want
            and [tuple(b.shape) for b in params["b"]] == [(b,) for _, b in want])


def _fresh_copy(a: Any) -> np.ndarray:
    """The array's current contents, read through a new device copy (no cached host value)."""
    return _np_array(_jnp_array(a, copy=True), copy=True)


# ---------------------------------------------------------------- the reference training loops
def bce_torch(z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Stable BCE with logits, mean over elements (ex02)."""
    return (_t_clamp(z, min=0) - z * y + _t_log1p(_t_exp(-_t_abs(z)))).mean()


def fit_torch(model: torch.nn.Module, x: np.ndarray, y: np.ndarray, epochs: int, lr: float,
              device: str | None = None) -> list[float]:
    """ex02's ``fit``: Adam, full batch, one ``train_step`` per epoch, data on ``device`` (None: the grading
    device); per-epoch losses."""
    opt = _Adam(model.parameters(), lr=lr)
    xt, yt = _torch_x(x, device), _torch_x(y, device)
    if yt.ndim == 1:
        yt = yt.reshape(-1, 1)
    losses = []
    for _ in range(epochs):
        model.train()
        opt.zero_grad()
        loss = bce_torch(model(xt), yt)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    return losses


def accuracy_torch(model: torch.nn.Module, x: np.ndarray, y: np.ndarray) -> float:
    """Validation accuracy: ``(sigmoid(logits) >= 0.5) == y``."""
    model.eval()
    with _no_grad():
        pred = (_t_sigmoid(model(_torch_x(x))) >= 0.5).float()
    return float((pred == _torch_x(y).reshape(-1, 1)).float().mean().item())


def bce_jax(params: dict, x: Any, y: Any) -> Any:
    """ex04's ``bce_loss``: stable BCE over the first logit, y of shape (N,)."""
    z = jax_forward(params, x)[:, 0]
    return _j_mean(_jnp_maximum(z, 0) - z * y + _j_log1p(_j_exp(-_j_abs(z))))


_STEPS: dict[float, Any] = {}


def _jax_step(lr: float) -> tuple[Any, Any, Any]:
    """``(optimizer, its compiled init, step)``: ex05's ``make_train_step`` for ``optax.adam(lr)``,
    compiled once per worker."""
    if lr not in _STEPS:
        opt = _adam(lr)

        def step(params: dict, opt_state: Any, x: Any, y: Any) -> tuple[dict, Any, Any]:
            loss, grads = _value_and_grad(bce_jax)(params, x, y)
            updates, opt_state = opt.update(grads, opt_state, params)
            return _apply_updates(params, updates), opt_state, loss

        # the optimizer's state built by one program (not one eager zeros per parameter shape)
        # at the run's compile level: 300 steps of this small MLP run faster than XLA's level 2 would
        # compile them (fit_jax 0.40 vs 0.56 CPU-s per side, measured)
        _STEPS[lr] = (opt, _jit(opt.init), _jit(step))
    return _STEPS[lr]


def fit_jax(params: dict, x: np.ndarray, y: np.ndarray, steps: int, lr: float) -> tuple[dict, list[float]]:
    """ex05's ``fit``: ``steps`` jitted Adam steps; final params and per-step losses."""
    _opt, init, step = _jax_step(lr)
    opt_state = init(params)
    xj, yj = _jnp_asarray(_np_array(x, dtype=np.float32)), _jnp_asarray(_np_array(y, dtype=np.float32))
    losses = []
    for _ in range(steps):
        params, opt_state, loss = step(params, opt_state, xj, yj)
        losses.append(loss)
    return params, [float(v) for v in losses]


def accuracy_jax(params: dict, x: np.ndarray, y: np.ndarray) -> float:
    """Validation accuracy: ``(logit >= 0) == (y == 1)``."""
    z = _np_array(_jax_forward_jit(params, _jnp_asarray(_np_array(x, dtype=np.float32))))[:, 0]
    return float(np.mean((z >= 0) == (y == 1)))


# ---------------------------------------------------------------- probes
def probe_to_jax(mod: Any, dims: list[int], weights: list[np.ndarray], x: np.ndarray,
                 kind: str = "sequential") -> dict[str, Any]:
    """``torch_mlp_to_jax`` on a torch MLP (an ``nn.Sequential``, or another ``kind`` of :func:`torch_model`)
    with the given weights: the pytree and both outputs."""
    model = torch_model(dims, kind, weights)
    params = _student_tree(get(mod, "torch_mlp_to_jax")(model), "torch_mlp_to_jax(model)")
    with _no_grad():
        torch_out = torch_to_np(model(_torch_x(x)), "model(x)")
    jax_out = None
    if _shapes_ok(params, dims):
        jax_out = _np_array(_jax_forward_jit(params, _jnp_asarray(_np_array(x, dtype=np.float32))))
    return {"params": tree_to_np(params, "torch_mlp_to_jax(model)"), "jax_out": jax_out, "torch_out": torch_out}


def probe_to_jax_then_train(mod: Any, dims: list[int], weights: list[np.ndarray], x: np.ndarray,
                            y: np.ndarray, steps: int) -> dict[str, Any]:
    """Converts, then trains the torch model in place: how much each JAX array changed meanwhile. On the
    host's CPU (:func:`_on_host`)."""
    with _on_host() as host:
        model = torch_mlp(dims, weights, device=host)
        params = _student_tree(get(mod, "torch_mlp_to_jax")(model), "torch_mlp_to_jax(model)")
        leaves = [*params["W"], *params["b"]]
        before = [_fresh_copy(a) for a in leaves]
        torch_before = [torch_to_np(p, "p") for p in model.parameters()]
        fit_torch(model, x, y, steps, 0.05, host)
        after = [_fresh_copy(a) for a in leaves]
        torch_after = [torch_to_np(p, "p") for p in model.parameters()]
    return {"jax_changed": [float(np.max(np.abs(a - b))) if a.shape == b.shape and a.size else 0.0
                            for a, b in zip(after, before, strict=True)],
            "torch_changed": float(max(np.max(np.abs(a - b)) for a, b in zip(torch_after, torch_before,
                                                                                strict=True)))}


def probe_to_torch(mod: Any, dims: list[int], params: dict, seed: int, x: np.ndarray,
                   kind: str = "sequential") -> dict[str, Any]:
    """``jax_to_torch_mlp`` into a torch MLP (a ``kind`` of :func:`torch_model`): its parameters and outputs
    vs the JAX forward."""
    model = torch_model(dims, kind, seed=seed)
    jp = jax_params(params)
    get(mod, "jax_to_torch_mlp")(jp, model)
    shapes = [tuple(p.shape) for p in model.parameters()]
    if shapes != [tuple(s) for a, b in zip(dims[:-1], dims[1:]) for s in ((b, a), (b,))]:
        raise ProbeFail("EX10_TORCH_SHAPES", call="jax_to_torch_mlp(params, model)", got=shapes)
    with _no_grad():
        torch_out = torch_to_np(model(_torch_x(x)), "model(x)")
    return {"weights": [torch_to_np(p, "model.parameters()") for p in model.parameters()],
            "torch_out": torch_out,
            "jax_out": _np_array(_jax_forward_jit(jp, _jnp_asarray(_np_array(x, dtype=np.float32))))}


def probe_to_torch_leaves(mod: Any, dims: list[int], params: dict, seed: int, x: np.ndarray) -> dict[str, Any]:
    """After ``jax_to_torch_mlp``: are the parameters the same objects, leaves, trainable, without grad? On the
    host's CPU (:func:`_on_host`)."""
    with _on_host() as host:
        model = torch_mlp(dims, seed=seed, device=host)
        before = tuple(model.parameters())  # by identity, in a tuple: the student's code can reach the probe's locals
        opt = _Adam(model.parameters(), lr=0.01)  # an optimizer built before the copy
        jp = jax_params(params)
        given = (*jp["W"], *jp["b"])  # the JAX arrays handed over, held here (the student's code gets the dict)
        given_before = tuple(sealed(_fresh_copy(a)) for a in given)
        get(mod, "jax_to_torch_mlp")(jp, model)
        # Everything is read into immutable locals, and the answer built only once no student code can run again:
        # hooks the copy left on the model run during the step below, and can reach the probe's locals (its frame).
        ps = tuple(model.parameters())
        same = len(ps) == len(before) and all(p is q for p, q in zip(ps, before))
        leaf = tuple(bool(p.is_leaf) for p in ps)
        requires = tuple(bool(p.requires_grad) for p in ps)
        fn_none = tuple(p.grad_fn is None for p in ps)
        grad_none = tuple(p.grad is None for p in ps)
        # one training step: does the optimizer built earlier still move the model's weights, by their gradients?
        snap = tuple(sealed(torch_to_np(p, "p")) for p in ps)
        try:
            _Adam.zero_grad(opt)  # the class's methods: the instance's own could be replaced
            model(_torch_x(x, host)).sum().backward()
            grads = tuple(p.grad is not None and bool(np.any(torch_to_np(p.grad, "p.grad"))) for p in ps)
            _Adam.step(opt)
            trains = all(grads) and all(not np.array_equal(torch_to_np(p, "p"), s) for p, s in zip(ps, snap, strict=True))
        except RuntimeError:
            trains = False
        # the step wrote the model's parameters in place: did it write the JAX arrays too (memory shared with them)?
        jax_moved = tuple(not np.array_equal(_fresh_copy(a), b) for a, b in zip(given, given_before, strict=True))
    return {"same_objects": same, "is_leaf": list(leaf), "requires_grad": list(requires),
            "grad_fn_none": list(fn_none), "grad_none": list(grad_none), "trains": bool(trains),
            "jax_changed": list(jax_moved)}


def probe_to_torch_errors(mod: Any, dims: list[int], seed: int, cases: list[dict]) -> list[dict[str, Any]]:
    """``jax_to_torch_mlp`` on mismatched params: what it raised (type, message), per case."""
    fn = get(mod, "jax_to_torch_mlp")
    out = []
    for params in cases:
        model = torch_mlp(dims, seed=seed)
        try:
            fn(jax_params(params), model)
        except NotImplementedError:
            raise
        except Exception as err:  # noqa: BLE001 - the exception is what is measured
            try:
                msg = " ".join(str(err).split())[:300]
            except Exception:  # noqa: BLE001 - a hostile __str__
                msg = ""
            out.append({"raised": type(err).__name__, "value_error": isinstance(err, ValueError), "message": msg})
            continue
        out.append({"raised": "", "value_error": False, "message": ""})
    return out


def probe_conv(mod: Any, weight: np.ndarray, bias: np.ndarray, x: np.ndarray) -> dict[str, Any]:
    """``torch_conv_to_flax`` on a Conv2d's weight; both convolutions on the same images (SAME padding)."""
    o, i, kh, kw = (int(s) for s in weight.shape)
    conv = _Conv2d(i, o, (kh, kw), padding="same")
    with _no_grad():
        conv.weight.copy_(_from_numpy(_np_array(weight, dtype=np.float32)))
        conv.bias.copy_(_from_numpy(_np_array(bias, dtype=np.float32)))
    conv = conv.to(DEVICE["torch"])
    with _no_grad():
        torch_out = torch_to_np(_conv2d(_torch_x(x), conv.weight, conv.bias, padding="same"), "conv2d")
    kernel = get(mod, "torch_conv_to_flax")(conv.weight)
    if not isinstance(kernel, _JaxArray):
        raise ProbeFail("WRONG_TYPE", call="torch_conv_to_flax(conv.weight)", got=type_name(kernel),
                        expected=label("value.a_use", code="jax.Array", use="HWIO"))
    flax_out = None
    if tuple(kernel.shape) == (kh, kw, i, o):
        layer = linen.Conv(features=o, kernel_size=(kh, kw), padding="SAME")
        variables = {"params": {"kernel": _jnp_asarray(kernel, dtype=jnp.float32),
                                "bias": _jnp_asarray(_np_array(bias, dtype=np.float32))}}
        nhwc = _jnp_asarray(_np_array(x, dtype=np.float32).transpose(0, 2, 3, 1))
        flax_out = _np_array(_jit(layer.apply)(variables, nhwc))
    return {"kernel": _np_array(kernel, copy=True), "flax_out": flax_out,
            "torch_out": torch_out.transpose(0, 2, 3, 1).copy()}


def probe_train_both(mod: Any, dims: list[int], params: dict, seed: int, epochs: int, lr: float,
                     head: int) -> dict[str, Any]:
    """One set of starting weights, moved by the student's bridge, trained by both reference loops.

    JAX params -> ``jax_to_torch_mlp`` -> torch model -> ``torch_mlp_to_jax`` -> JAX params;
    the JAX fit runs first (so a JAX copy that shares torch memory does not see the torch run).
    """
    d = _MOONS
    model = torch_mlp(dims, seed=seed)
    get(mod, "jax_to_torch_mlp")(jax_params(params), model)
    start = _student_tree(get(mod, "torch_mlp_to_jax")(model), "torch_mlp_to_jax(model)")
    if not _shapes_ok(start, dims):
        raise ProbeFail("EX10_SHAPES", call="torch_mlp_to_jax(model)",
                        got=[tuple(w.shape) for w in start["W"]])
    final, jax_losses = fit_jax(start, d["x_train"], d["y_train"], epochs, lr)
    torch_losses = fit_torch(model, d["x_train"], d["y_train"], epochs, lr)
    return {"torch_head": torch_losses[:head], "jax_head": jax_losses[:head],
            "torch_final": torch_losses[-1], "jax_final": jax_losses[-1],
            "torch_val_acc": accuracy_torch(model, d["x_val"], d["y_val"]),
            "jax_val_acc": accuracy_jax(final, d["x_val"], d["y_val"])}
