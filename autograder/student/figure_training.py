"""Running the student's code for a figure: the names it needs, numbers out of their models, brief training.

Owns what a figure asks of the notebook's namespace (``_need``: a missing name says which cells to run),
the datasets (``_dataset``, also from the runtime's zip), numbers out of torch tensors and JAX arrays
(``_np``, ``_torch_logits``, torch on one thread while drawing) and the short, seeded training runs made
with the student's own functions (``_train_torch_moons``, ``_train_jax_moons``; the contract's settings
below). The student's global torch RNG is left as it was (``torch.random.fork_rng``).
"""

from __future__ import annotations

import contextlib
import inspect
import io
import pkgutil
import sys
from collections.abc import Callable, Sequence
from typing import Any

from autograder.core import data as _data
from autograder.student.figure_canvas import _t

# Training settings of the figures (the contract's: make_moons MLP [2, 32, 32, 1], Adam 0.01, 300 epochs).
MOONS_EPOCHS = 300
MOONS_LR = 0.01
DIGITS_STEPS = 60
DIGITS_LR = 0.01


# ----------------------------------------------------------------- helpers
def _dataset(name: str) -> dict:
    """``_data.load(name)``, also when the package is a zip on ``sys.path`` (the notebook's runtime)."""
    try:
        return _data.load(name)
    except OSError:
        _data.DATA_FILE = io.BytesIO(pkgutil.get_data("autograder", "data/datasets.npz"))
        _data._all.cache_clear()
        return _data.load(name)


def _np(x: Any) -> Any:
    """Any torch tensor / jax array / sequence -> numpy float64 array."""
    import numpy as np

    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


@contextlib.contextmanager
def _one_torch_thread() -> Any:
    """Runs torch on one thread, then restores the student's setting.

    The figures' models are tiny: extra threads buy nothing, and on a busy or shared
    machine they slow each step down by 10-100x (thread contention).
    """
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _torch_device(model: Any) -> Any:
    import torch

    for p in model.parameters():
        return p.device
    return torch.device("cpu")


def _torch_logits(model: Any, x: Any) -> Any:
    """Runs a torch model in eval mode without a graph; restores its mode."""
    import numpy as np
    import torch

    was_training = model.training
    model.eval()
    try:
        with _one_torch_thread(), torch.inference_mode():  # no graph: we only read the numbers
            out = model(torch.as_tensor(np.asarray(x, np.float32), device=_torch_device(model)))
    finally:
        model.train(was_training)
    return _np(out)



# ----------------------------------------------------------------- training with the student's code
class _MissingNames(NameError):
    """A name a figure needs is not in the notebook yet (the message says which cells to run)."""


def _need(ns: dict, ex: str, names: Sequence[str], where: str, lang: str) -> list[Any]:
    missing = [n for n in names if not callable(ns.get(n))]
    if missing:
        raise _MissingNames(_t("needs", lang, ex=ex, names=", ".join(f"`{n}`" for n in missing), where=where))
    return [ns[n] for n in names]


def _seeded(fn: Callable, *args: Any) -> Any:
    """Calls ``fn`` with torch's global RNG seeded, leaving the student's RNG as it was."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return fn(*args)


def _new_mlp(mlp_cls: Callable) -> Any:
    """The contract's make_moons MLP, ``MLP(2, [32, 32], 1)``, with seeded initial weights."""
    return _seeded(mlp_cls, 2, [32, 32], 1)


def _moons_torch(data: dict) -> tuple[Any, Any, Any, Any]:
    import torch

    xt = torch.as_tensor(data["x_train"])
    yt = torch.as_tensor(data["y_train"])[:, None]
    xv = torch.as_tensor(data["x_val"])
    yv = torch.as_tensor(data["y_val"])[:, None]
    return xt, yt, xv, yv


def _train_torch_moons(ns: dict, ex: str, lang: str, model: Any = None, *,
                       with_eval: bool = True) -> tuple[Any, dict[str, list[float]]]:
    """Trains an MLP on make_moons with the student's ``train_step`` (and ``evaluate``)."""
    import torch

    mlp_cls, step, bce = _need(ns, ex, ("MLP", "train_step", "bce_with_logits"), "ex01 + ex02", lang)
    evaluate = _need(ns, ex, ("evaluate",), "ex02", lang)[0] if with_eval else None
    if model is None:
        model = _new_mlp(mlp_cls)
    xt, yt, xv, yv = _moons_torch(_dataset("moons"))
    opt = torch.optim.Adam(model.parameters(), lr=MOONS_LR)
    hist: dict[str, list[float]] = {"loss": [], "val_loss": [], "acc": [], "val_acc": []}
    for _ in range(MOONS_EPOCHS):
        hist["loss"].append(float(step(model, opt, xt, yt, bce)))
        if evaluate is not None:
            hist["acc"].append(float(evaluate(model, xt, yt, bce)[1]))
            val_loss, val_acc = evaluate(model, xv, yv, bce)
            hist["val_loss"].append(float(val_loss))
            hist["val_acc"].append(float(val_acc))
    return model, hist


def _jax_fit_fn(ns: dict) -> Callable | None:
    """The student's JAX ``fit`` (ex05), told apart from the PyTorch ``fit`` (ex02) by its signature."""
    fit = ns.get("fit")
    if not callable(fit):
        return None
    try:
        return fit if "steps" in inspect.signature(fit).parameters else None
    except (TypeError, ValueError):
        return None


def _train_jax_moons(ns: dict, ex: str, lang: str, params: Any = None,
                     with_eval: bool = True) -> tuple[Any, dict[str, list[float]]]:
    """Trains the JAX MLP with the student's ``make_train_step`` (or ``fit``) on make_moons."""
    import jax
    import jax.numpy as jnp
    import optax

    init, forward, loss_fn = _need(ns, ex, ("init_params", "mlp_forward", "bce_loss"), "ex04", lang)
    data = _dataset("moons")
    xt, yt = jnp.asarray(data["x_train"]), jnp.asarray(data["y_train"])
    xv, yv = jnp.asarray(data["x_val"]), jnp.asarray(data["y_val"])
    if params is None:
        params = init([2, 32, 32, 1], jax.random.PRNGKey(0))
    hist: dict[str, list[float]] = {"loss": [], "val_loss": [], "acc": [], "val_acc": []}
    make_step = ns.get("make_train_step")
    fit = _jax_fit_fn(ns)
    if not callable(make_step):
        if fit is None:
            _need(ns, ex, ("make_train_step",), "ex05", lang)
        params, losses = fit(params, xt, yt, steps=MOONS_EPOCHS, learning_rate=MOONS_LR, loss_fn=loss_fn)
        hist["loss"] = [float(v) for v in losses]
        return params, hist
    opt = optax.adam(MOONS_LR)
    step = make_step(loss_fn, opt)
    state = opt.init(params)
    val_loss = jax.jit(loss_fn)
    logits = jax.jit(forward)
    for _ in range(MOONS_EPOCHS):
        params, state, loss = step(params, state, xt, yt)
        hist["loss"].append(float(loss))
        if with_eval:
            hist["val_loss"].append(float(val_loss(params, xv, yv)))
            for key, x, y in (("acc", xt, yt), ("val_acc", xv, yv)):
                z = _np(logits(params, x))[:, 0]
                hist[key].append(float(((z >= 0) == (_np(y) == 1)).mean()))
    return params, hist
