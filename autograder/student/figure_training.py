"""Running the student's code for a figure: the names it needs, numbers out of their models, brief training.

Owns what a figure asks of the notebook's namespace (``need_names``: a missing name says which cells to run),
the datasets (``load_dataset``, also from the runtime's zip), numbers out of torch tensors and JAX arrays
(``to_numpy``, ``_torch_logits``, torch on one thread while drawing) and the short, seeded training runs made
with the student's own functions (``train_torch_moons``, ``train_jax_moons``; the contract's settings
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
from autograder.student.figure_canvas import figure_text

# Training settings of the figures (the contract's: make_moons MLP [2, 32, 32, 1], Adam 0.01, 300 epochs).
MOONS_EPOCHS = 300
MOONS_LR = 0.01
DIGITS_STEPS = 60
DIGITS_LR = 0.01


# ----------------------------------------------------------------- helpers
def load_dataset(name: str) -> dict:
    """One dataset's split, also when the package is a zip on ``sys.path`` (the notebook's runtime).

    Args:
        name: ``"moons"`` or ``"digits"`` (:func:`autograder.core.data.load`).

    Returns:
        ``{"x_train", "y_train", "x_val", "y_val"}``.
    """
    try:
        return _data.load(name)
    except OSError:
        _data.DATA_FILE = io.BytesIO(pkgutil.get_data("autograder", "data/datasets.npz"))
        _data.all_arrays.cache_clear()
        return _data.load(name)


def to_numpy(x: Any) -> Any:
    """Any torch tensor, JAX array or sequence as a numpy float64 array (torch: detached, on the CPU).

    Args:
        x: The tensor, array or nested sequence.

    Returns:
        A ``numpy.ndarray`` of ``float64``.
    """
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
    return to_numpy(out)



# ----------------------------------------------------------------- training with the student's code
class _MissingNames(NameError):
    """A name a figure needs is not in the notebook yet (the message says which cells to run)."""


def need_names(ns: dict, ex: str, names: Sequence[str], where: str, lang: str) -> list[Any]:
    """The callables ``names`` of the notebook's namespace, in order.

    Args:
        ns: The notebook's namespace.
        ex: The exercise the figure belongs to (named in the message).
        names: The names the figure needs.
        where: The exercises whose cells define them (``"ex01 + ex02"``), named in the message.
        lang: The message's language.

    Returns:
        The values of ``names``.

    Raises:
        NameError: (``_MissingNames``) one of them is missing or not callable; the message says which cells to run.
    """
    missing = [n for n in names if not callable(ns.get(n))]
    if missing:
        raise _MissingNames(figure_text("needs", lang, ex=ex, names=", ".join(f"`{n}`" for n in missing), where=where))
    return [ns[n] for n in names]


def seeded(fn: Callable, *args: Any) -> Any:
    """Calls ``fn(*args)`` with torch's global RNG seeded (0), leaving the student's RNG as it was.

    Args:
        fn: What to call (a model class, an initialiser).
        *args: Its arguments.

    Returns:
        What ``fn`` returns.
    """
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return fn(*args)


def new_mlp(mlp_cls: Callable) -> Any:
    """The contract's make_moons MLP, ``MLP(2, [32, 32], 1)``, with seeded initial weights.

    Args:
        mlp_cls: The student's ``MLP`` class (ex01).

    Returns:
        The model.
    """
    return seeded(mlp_cls, 2, [32, 32], 1)


def _moons_torch(data: dict) -> tuple[Any, Any, Any, Any]:
    import torch

    xt = torch.as_tensor(data["x_train"])
    yt = torch.as_tensor(data["y_train"])[:, None]
    xv = torch.as_tensor(data["x_val"])
    yv = torch.as_tensor(data["y_val"])[:, None]
    return xt, yt, xv, yv


def train_torch_moons(ns: dict, ex: str, lang: str, model: Any = None, *,
                       with_eval: bool = True) -> tuple[Any, dict[str, list[float]]]:
    """Trains an MLP on make_moons with the student's ``train_step`` (and ``evaluate``).

    Adam at :data:`MOONS_LR` for :data:`MOONS_EPOCHS` full-batch epochs (the contract's settings).

    Args:
        ns: The notebook's namespace (``MLP``, ``train_step``, ``bce_with_logits``; ``evaluate``).
        ex: The exercise drawing the figure (named when a name is missing).
        lang: The language of that message.
        model: The model to train; ``None``: a fresh :func:`new_mlp`.
        with_eval: Also record accuracies and validation losses with the student's ``evaluate``.

    Returns:
        ``(model, history)``, history's keys ``loss``, ``val_loss``, ``acc``, ``val_acc`` (lists of floats,
        the last three empty without ``with_eval``).
    """
    import torch

    mlp_cls, step, bce = need_names(ns, ex, ("MLP", "train_step", "bce_with_logits"), "ex01 + ex02", lang)
    evaluate = need_names(ns, ex, ("evaluate",), "ex02", lang)[0] if with_eval else None
    if model is None:
        model = new_mlp(mlp_cls)
    xt, yt, xv, yv = _moons_torch(load_dataset("moons"))
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


def train_jax_moons(ns: dict, ex: str, lang: str, params: Any = None,
                     with_eval: bool = True) -> tuple[Any, dict[str, list[float]]]:
    """Trains the JAX MLP on make_moons with the student's ``make_train_step`` (or ex05's ``fit``).

    Args:
        ns: The notebook's namespace (``init_params``, ``mlp_forward``, ``bce_loss``; ``make_train_step``
            or ``fit``).
        ex: The exercise drawing the figure (named when a name is missing).
        lang: The language of that message.
        params: The starting parameters; ``None``: ``init_params([2, 32, 32, 1], PRNGKey(0))``.
        with_eval: Also record validation losses and accuracies (``make_train_step`` only).

    Returns:
        ``(params, history)``, history's keys ``loss``, ``val_loss``, ``acc``, ``val_acc`` (lists of floats).
    """
    import jax
    import jax.numpy as jnp
    import optax

    init, forward, loss_fn = need_names(ns, ex, ("init_params", "mlp_forward", "bce_loss"), "ex04", lang)
    data = load_dataset("moons")
    xt, yt = jnp.asarray(data["x_train"]), jnp.asarray(data["y_train"])
    xv, yv = jnp.asarray(data["x_val"]), jnp.asarray(data["y_val"])
    if params is None:
        params = init([2, 32, 32, 1], jax.random.PRNGKey(0))
    hist: dict[str, list[float]] = {"loss": [], "val_loss": [], "acc": [], "val_acc": []}
    make_step = ns.get("make_train_step")
    fit = _jax_fit_fn(ns)
    if not callable(make_step):
        if fit is None:
            need_names(ns, ex, ("make_train_step",), "ex05", lang)
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
                z = to_numpy(logits(params, x))[:, 0]
                hist[key].append(float(((z >= 0) == (to_numpy(y) == 1)).mean()))
    return params, hist
