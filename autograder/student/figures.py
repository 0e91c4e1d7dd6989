"""Figures drawn from the student's own code.

Each function takes the student's objects (a model, params, a function) and
returns a matplotlib ``Figure``; inside Jupyter/Colab it also shows the figure
inline, once (returning it as a cell's last value does not show it twice).
``figure("exNN")`` picks the right figure for an exercise from the notebook's
globals, trains briefly where the figure needs a trained model (with the
student's own training functions), and draws it.

Only numpy, matplotlib, torch, jax, flax and optax are used, all imported
lazily. Figures never touch pyplot's global state (they are plain
``matplotlib.figure.Figure`` objects rendered with Agg), nor the global
torch RNG (``torch.random.fork_rng``).

    >>> figure("ex02")                     # in the notebook, after ex02 passes its checks
    >>> moons_boundary(torch_model=model, jax_params=params, jax_forward=mlp_forward)
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import pkgutil
import sys
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from autograder.core import data as _data
from autograder.core.i18n import render, section
from autograder.core.registry import module_name, resolve
from autograder.student import get_language

# ----------------------------------------------------------------- texts
# The figures' labels and notes, by language (UI text: the "figure." keys of autograder/messages/student.py).
TEXT: dict[str, dict[str, str]] = section("figure")

# Training settings of the figures (the contract's: make_moons MLP [2, 32, 32, 1], Adam 0.01, 300 epochs).
MOONS_EPOCHS = 300
MOONS_LR = 0.01
DIGITS_STEPS = 60
DIGITS_LR = 0.01


def _t(key: str, lang: str, **fields: Any) -> str:
    return render(f"figure.{key}", lang, **fields)


# ----------------------------------------------------------------- display
def _ipython() -> Any:
    """The running IPython shell, or None (never imports IPython itself)."""
    mod = sys.modules.get("IPython")
    if mod is None:
        return None
    try:
        return mod.get_ipython()
    except Exception:  # a broken IPython must not break a figure
        return None


def to_png(fig: Any, dpi: int = 80) -> bytes:
    """Renders a figure to PNG bytes with the Agg canvas (no pyplot, no display needed)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


@cache
def _figure_class() -> type:
    from matplotlib.figure import Figure

    class StudentFigure(Figure):
        """A Figure that shows itself once per notebook cell, as a PNG."""

        _tt_shown_at: Any = None

        def _ipython_display_(self) -> None:
            shell = _ipython()
            count = getattr(shell, "execution_count", None)
            if self._tt_shown_at is not None and self._tt_shown_at == count:
                return  # already shown by the call that drew it, in this same cell
            self._tt_shown_at = count
            from IPython.display import Image, display

            display(Image(data=to_png(self, dpi=90)))

    return StudentFigure


def _new_figure(width: float, height: float) -> Any:
    return _figure_class()(figsize=(width, height), layout="constrained")


def say(fig: Any, text: str, *, warn: bool = False) -> None:
    """Puts a sentence under a figure and keeps it for the notebook to print (:func:`notes`).

    What a figure trains, and from whose code, is said this way (``warn=False``, grey); so is what it
    cannot show (``warn=True``, red): a loss that turned nan or grew, outputs that are nan, a model that
    learnt nothing. A figure never stays silent about either.

    Args:
        fig: the figure.
        text: one sentence, in the figure's language.
        warn: a problem with what the figure shows (the caption turns red).
    """
    import textwrap

    notes = fig.__dict__.setdefault("_tt_notes", [])
    if text in [t for t, _ in notes]:
        return
    notes.append((text, warn))
    width = max(40, int(fig.get_figwidth() * 14))
    lines = [textwrap.fill(("⚠ " if w else "") + t, width) for t, w in notes]
    color = "#c92a2a" if any(w for _, w in notes) else "#495057"
    fig.supxlabel("\n".join(lines), fontsize=9, color=color, ha="center")


def notes(fig: Any) -> list[str]:
    """The sentences :func:`say` put under a figure, in order (warnings marked with ⚠)."""
    return [("⚠ " if w else "") + t for t, w in fig.__dict__.get("_tt_notes", [])]


def _finite(values: Any) -> Any:
    import numpy as np

    return np.isfinite(np.asarray(values, dtype=np.float64))


def check_series(fig: Any, values: Sequence[float], what: str, unit: str, lang: str, *,
                 growth: bool = True) -> None:
    """Says under ``fig`` when a training series cannot show training: nan/inf from some step on, or
    (``growth``: a training loss) a loss that ended clearly higher than it started (divergence).

    Args:
        fig: the figure the series is drawn in.
        values: the series (a loss per epoch/step).
        what: its name, as the figure's legend says it (e.g. "loss (training)").
        unit: ``"epoch"`` or ``"step"``.
        lang: the figure's language.
        growth: also say when the loss grew (a validation loss may rise: overfitting, not divergence).
    """
    import numpy as np

    v = np.asarray(list(values), dtype=np.float64).ravel()
    if not len(v):
        return
    ok = _finite(v)
    if not ok.all():
        first = int(np.argmin(ok))
        say(fig, _t("went_nan", lang, what=what, at=_t(f"at_{unit}", lang, n=first + 1), total=len(v)), warn=True)
    elif growth and len(v) >= 5 and v[-1] > 1.5 * v[0] and v[-1] - v[0] > 1e-3:
        say(fig, _t("diverged", lang, what=what, first=v[0], last=v[-1]), warn=True)


def _show(fig: Any, show: bool) -> Any:
    if show and _ipython() is not None:
        from IPython.display import display

        display(fig)
    return fig


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


def _sigmoid(z: Any) -> Any:
    import numpy as np

    return 0.5 * (1.0 + np.tanh(0.5 * z))


# ----------------------------------------------------------------- moons
def _draw_boundary(ax: Any, logit_fn: Callable[[Any], Any], data: dict, name: str, lang: str,
                   trained: bool = False) -> Any:
    import numpy as np

    x_all = np.concatenate([data["x_train"], data["x_val"]])
    lo, hi = x_all.min(axis=0) - 0.5, x_all.max(axis=0) + 0.5
    g1, g2 = np.meshgrid(np.linspace(lo[0], hi[0], 160), np.linspace(lo[1], hi[1], 160))
    grid = np.stack([g1.ravel(), g2.ravel()], axis=1).astype(np.float32)
    logits = np.asarray(logit_fn(grid), dtype=np.float64)
    val_logits = np.asarray(logit_fn(data["x_val"].astype(np.float32)), dtype=np.float64)
    cs = None
    fig = ax.figure
    if not (_finite(logits).all() and _finite(val_logits).all()):
        ax.text(0.5, 0.5, _t("nan_short", lang), transform=ax.transAxes, ha="center", va="center",
                fontsize=12, color="#c92a2a", bbox={"facecolor": "white", "edgecolor": "#c92a2a"})
        say(fig, _t("nan_outputs", lang, name=name), warn=True)
    else:
        prob = _sigmoid(logits).reshape(g1.shape)
        cs = ax.contourf(g1, g2, prob, levels=np.linspace(0, 1, 11), cmap="RdBu_r", alpha=0.55)
        ax.contour(g1, g2, prob, levels=[0.5], colors="k", linewidths=1.5)
    val_acc = float(np.mean((val_logits >= 0) == (data["y_val"] == 1)))
    if trained and val_acc < 0.6:
        say(fig, _t("chance", lang, name=name, acc=val_acc, chance=0.5), warn=True)
    for split, marker, label in (("train", "o", "train_pts"), ("val", "^", "val_pts")):
        xs, ys = data[f"x_{split}"], data[f"y_{split}"]
        colors = np.where(ys == 1, "#b2182b", "#2166ac")
        ax.scatter(xs[:, 0], xs[:, 1], c=colors, marker=marker, s=16, edgecolors="white", linewidths=0.6,
                   label=_t(label, lang))
    ax.set_title(f"{name} — {_t('val_acc', lang, acc=val_acc)}")
    ax.set_xlabel(_t("x1", lang))
    ax.set_ylabel(_t("x2", lang))
    ax.legend(loc="lower left", fontsize=8)
    return cs


def moons_boundary(torch_model: Any = None, jax_params: Any = None, jax_forward: Callable | None = None, *,
                   lang: str | None = None, title: str | None = None, show: bool = True,
                   trained: bool = False) -> Any:
    """The make_moons decision boundary of a PyTorch and/or a JAX MLP, side by side.

    Args:
        torch_model: an ``nn.Module`` mapping ``(N, 2)`` to ``(N, 1)`` logits, or None.
        jax_params: params for ``jax_forward``, or None.
        jax_forward: ``jax_forward(params, x)`` -> ``(N, 1)`` logits (e.g. ``mlp_forward``).
        lang: ``"en"``/``"es"``; default: the notebook's language.
        title: the figure's title (default: "make_moons: decision boundary").
        show: display inline when running in IPython.
        trained: the models were trained (a validation accuracy near chance is then said in words).

    Returns:
        The matplotlib Figure.
    """
    lang = get_language(lang)
    panels: list[tuple[str, Callable]] = []
    if torch_model is not None:
        panels.append((_t("torch", lang), lambda x: _torch_logits(torch_model, x)[:, 0]))
    if jax_params is not None and jax_forward is not None:
        panels.append((_t("jax", lang), lambda x: _np(jax_forward(jax_params, x))[:, 0]))
    if not panels:
        raise ValueError(_t("no_model", lang))
    data = _dataset("moons")
    fig = _new_figure(5.0 * len(panels) + 0.8, 4.4)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    cs = None
    for ax, (name, fn) in zip(axes, panels):
        cs = _draw_boundary(ax, fn, data, name, lang, trained) or cs
    if cs is not None:
        fig.colorbar(cs, ax=list(axes), label=_t("prob", lang), shrink=0.85)
    fig.suptitle(title or _t("boundary", lang))
    return _show(fig, show)


# ----------------------------------------------------------------- curves
def training_curves(losses: Sequence[float], val_losses: Sequence[float] | None = None,
                    accs: Sequence[float] | None = None, val_accs: Sequence[float] | None = None, *,
                    unit: str = "epoch", lang: str | None = None, title: str | None = None,
                    show: bool = True) -> Any:
    """Loss (and accuracy) per epoch or step, training and validation.

    Args:
        losses: training loss per epoch/step.
        val_losses: validation loss per epoch/step, or None.
        accs: training accuracy per epoch/step, or None.
        val_accs: validation accuracy per epoch/step, or None.
        unit: ``"epoch"`` or ``"step"`` (the x-axis label).
        lang: ``"en"``/``"es"``; default: the notebook's language.
        title: the figure's title.
        show: display inline when running in IPython.

    Returns:
        The matplotlib Figure: a loss panel, plus an accuracy panel when accuracies are given.
    """
    import numpy as np

    lang = get_language(lang)
    has_acc = accs is not None or val_accs is not None
    fig = _new_figure(10.0 if has_acc else 5.5, 3.8)
    axes = fig.subplots(1, 2 if has_acc else 1, squeeze=False)[0]
    series = [(axes[0], losses, val_losses, "loss")]
    if has_acc:
        series.append((axes[1], accs, val_accs, "accuracy"))
    for ax, train, val, what in series:
        for values, key, style in ((train, "train", "-"), (val, "val", "--")):
            if values is None:
                continue
            v = _np(list(values)).ravel()
            ax.plot(np.arange(1, len(v) + 1), v, style, label=_t(key, lang), linewidth=1.6)
            if what == "loss":
                check_series(fig, v, f"{_t('loss', lang)} ({_t(key, lang)})", unit, lang, growth=key == "train")
        ax.set_xlabel(_t(unit, lang))
        ax.set_ylabel(_t(what, lang))
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(title or _t("curves", lang))
    return _show(fig, show)


# ----------------------------------------------------------------- digits
def _first_filters(model: Any, params: Any) -> Any:
    """First conv layer's kernels as ``(n_filters, kH, kW)``, or None."""
    import numpy as np

    if params is not None:
        import jax

        leaves = jax.tree_util.tree_leaves_with_path(params)
        for path, leaf in leaves:
            if getattr(leaf, "ndim", 0) == 4 and "kernel" in jax.tree_util.keystr(path):
                k = np.asarray(leaf, dtype=np.float64)  # HWIO
                return np.transpose(k[:, :, 0, :], (2, 0, 1))
        return None
    if model is not None and hasattr(model, "modules"):
        import torch

        for m in model.modules():
            if isinstance(m, torch.nn.Conv2d):
                return _np(m.weight)[:, 0]  # OIHW -> first input channel
    return None


def digits_report(predict_fn: Any, params: Any = None, *, lang: str | None = None, title: str | None = None,
                  show: bool = True, trained: bool = False) -> Any:
    """Confusion matrix on the digits validation split, and the first-layer filters.

    Args:
        predict_fn: a torch CNN (``(N, 1, 8, 8)`` -> logits), a Flax module (with ``params``,
            ``(N, 8, 8, 1)`` -> logits), or any callable taking numpy ``(N, 8, 8)`` images and
            returning logits ``(N, 10)`` or labels ``(N,)``.
        params: the Flax variables (``{"params": ...}``) when ``predict_fn`` is a Flax module.
        lang: ``"en"``/``"es"``; default: the notebook's language.
        title: the figure's title.
        show: display inline when running in IPython.
        trained: the model was trained (an accuracy near chance is then said in words).

    Returns:
        The matplotlib Figure (filters shown when a torch CNN or Flax params are given).
    """
    import numpy as np

    lang = get_language(lang)
    data = _dataset("digits")
    x, y = data["x_val"].astype(np.float32), data["y_val"].astype(np.int64)
    if params is not None and hasattr(predict_fn, "apply"):
        import jax

        out = _np(jax.jit(predict_fn.apply)(params, x[..., None]))
    elif hasattr(predict_fn, "parameters") and hasattr(predict_fn, "eval"):
        out = _torch_logits(predict_fn, x[:, None])
    else:
        out = _np(predict_fn(x))
    pred = out.argmax(axis=1) if out.ndim == 2 else out.astype(np.int64)
    cm = np.zeros((10, 10), dtype=np.int64)
    np.add.at(cm, (y, pred), 1)
    acc = float(np.mean(pred == y))
    filters = _first_filters(predict_fn if params is None else None, params)

    fig = _new_figure(10.5 if filters is not None else 5.5, 4.8)
    if filters is not None:
        left, right = fig.subfigures(1, 2, width_ratios=[1.15, 1.0])
    else:
        left, right = fig, None
    ax = left.subplots()
    ax.imshow(cm, cmap="Blues")
    for i in range(10):
        for j in range(10):
            if cm[i, j]:
                ax.text(j, i, str(cm[i, j]), ha="center", va="center", fontsize=7,
                        color="white" if cm[i, j] > cm.max() / 2 else "black")
    ax.set_xticks(range(10))
    ax.set_yticks(range(10))
    ax.set_xlabel(_t("pred", lang))
    ax.set_ylabel(_t("true", lang))
    ax.set_title(_t("confusion", lang, acc=acc))
    if right is not None:
        n = filters.shape[0]
        cols = int(np.ceil(np.sqrt(n)))
        rows = int(np.ceil(n / cols))
        grid = right.subplots(rows, cols, squeeze=False)
        vmax = float(np.abs(filters).max()) or 1.0
        for k, a in enumerate(grid.ravel()):
            a.set_axis_off()
            if k < n:
                a.imshow(filters[k], cmap="bwr", vmin=-vmax, vmax=vmax)
        right.suptitle(_t("filters", lang))
    fig.suptitle(title or _t("digits", lang))
    if not _finite(out).all():
        say(fig, _t("nan_logits", lang), warn=True)
    elif trained and acc < 0.2:
        say(fig, _t("chance_digits", lang, acc=acc, chance=0.1), warn=True)
    return _show(fig, show)


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


# ----------------------------------------------------------------- one entry point
def _figures_for(ex: str, ns: dict, lang: str) -> list[Any]:
    """The figures of an exercise: its package's ``figure.figures`` (autograder/exercises/<ex>/figure.py)."""
    try:
        mod = importlib.import_module(module_name(ex, "figure"))
    except ModuleNotFoundError as err:
        if err.name != module_name(ex, "figure"):
            raise
        raise ValueError(_t("no_figure", lang, ex=ex)) from None
    return mod.figures(ex, ns, lang)


def figure(exercise: str, namespace: dict | None = None, *, lang: str | None = None,
           show: bool = True) -> Any:
    """Draws the student's result for an exercise, from the notebook's globals.

    ``figure("ex02")`` trains the student's ``MLP`` with their ``train_step`` and ``evaluate``
    and draws the training curves and the decision boundary; ``figure("ex08")`` plots the
    BCE and its derivatives from their ``nth_derivative``; and so on (see ``_figures_for``).

    Args:
        exercise: ``"ex02"`` or the full exercise name.
        namespace: where to find the student's names; default: the caller's globals
            (the notebook's namespace when called from a cell).
        lang: ``"en"``/``"es"``; default: the notebook's language.
        show: display inline when running in IPython.

    Returns:
        The Figure, or a list of Figures when the exercise has several.

    Raises:
        NameError: a name the figure needs is not defined yet (message says which cells to run).
    """
    lang = get_language(lang)
    ex = resolve(exercise, lang=lang)
    if namespace is None:
        namespace = sys._getframe(1).f_globals
    with _one_torch_thread():
        figs = _figures_for(ex, dict(namespace), lang)
    for fig in figs:
        _show(fig, show)
        if show:
            for line in notes(fig):
                print(line)
    return figs[0] if len(figs) == 1 else _figure_list(figs)


def notebook_figure(exercise: str, namespace: dict | None = None, *, lang: str | None = None,
                    show: bool = True) -> Any:
    """:func:`figure` as the notebook defines it: an unfinished exercise is explained, not raised.

    The notebook's figure cells run with "Run all": a stub (``NotImplementedError``), a name
    not defined yet (``NameError``) or an error in the student's code would stop every later
    cell. Here such a problem prints one line in the notebook's language instead (what to do
    next) and the call returns None.

    Args:
        exercise: ``"ex02"`` or the full exercise name.
        namespace: where to find the student's names; default: the caller's globals.
        lang: ``"en"``/``"es"``; default: the notebook's language.
        show: display inline when running in IPython.

    Returns:
        What :func:`figure` returns, or None when no figure could be drawn.
    """
    lang = get_language(lang)
    ex = resolve(exercise, lang=lang)  # a wrong name is the caller's typo: raised
    if namespace is None:
        namespace = sys._getframe(1).f_globals
    try:
        return figure(ex, namespace, lang=lang, show=show)
    except NotImplementedError:
        print(_t("not_done", lang, ex=ex[:4]))
    except _MissingNames as err:
        print(err)
    except Exception as err:  # noqa: BLE001 - the student's code failed while drawing
        error = f"{type(err).__name__}: {err}".strip()
        print(_t("failed", lang, ex=ex[:4], error=error[:300]))
    return None


def _figure_list(figs: list[Any]) -> list[Any]:
    """A list of figures that displays as the figures, not as a list's text, in IPython."""

    class Figures(list):
        def _ipython_display_(self) -> None:
            for fig in self:
                fig._ipython_display_()

    return Figures(figs)


show = figure  # the notebook loader already drops cells that only call show(...)/figure(...)
