"""The figures several exercises draw: the make_moons decision boundary, training curves, digits' results.

Owns :func:`moons_boundary` (a PyTorch and/or JAX MLP's boundary, side by side), :func:`training_curves`
(loss and accuracy per epoch or step) and :func:`digits_report` (the confusion matrix and first-layer
filters of a digits CNN). Each takes the student's objects and returns a ``Figure`` (shown inline once
inside IPython); each exercise's own figure (``autograder/exercises/<ex>/figure.py``) builds on them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from autograder.student import get_language
from autograder.student.figure_canvas import _finite, check_series, figure_text, new_figure, say, show_figure
from autograder.student.figure_training import _torch_logits, load_dataset, to_numpy


def sigmoid(z: Any) -> Any:
    """The logistic function, computed without overflow (``tanh``).

    Args:
        z: Logits (a numpy array or scalar).

    Returns:
        ``1 / (1 + exp(-z))``, elementwise.
    """
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
        ax.text(0.5, 0.5, figure_text("nan_short", lang), transform=ax.transAxes, ha="center", va="center",
                fontsize=12, color="#c92a2a", bbox={"facecolor": "white", "edgecolor": "#c92a2a"})
        say(fig, figure_text("nan_outputs", lang, name=name), warn=True)
    else:
        prob = sigmoid(logits).reshape(g1.shape)
        cs = ax.contourf(g1, g2, prob, levels=np.linspace(0, 1, 11), cmap="RdBu_r", alpha=0.55)
        ax.contour(g1, g2, prob, levels=[0.5], colors="k", linewidths=1.5)
    val_acc = float(np.mean((val_logits >= 0) == (data["y_val"] == 1)))
    if trained and val_acc < 0.6:
        say(fig, figure_text("chance", lang, name=name, acc=val_acc, chance=0.5), warn=True)
    for split, marker, label in (("train", "o", "train_pts"), ("val", "^", "val_pts")):
        xs, ys = data[f"x_{split}"], data[f"y_{split}"]
        colors = np.where(ys == 1, "#b2182b", "#2166ac")
        ax.scatter(xs[:, 0], xs[:, 1], c=colors, marker=marker, s=16, edgecolors="white", linewidths=0.6,
                   label=figure_text(label, lang))
    ax.set_title(f"{name} — {figure_text('val_acc', lang, acc=val_acc)}")
    ax.set_xlabel(figure_text("x1", lang))
    ax.set_ylabel(figure_text("x2", lang))
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
        panels.append((figure_text("torch", lang), lambda x: _torch_logits(torch_model, x)[:, 0]))
    if jax_params is not None and jax_forward is not None:
        panels.append((figure_text("jax", lang), lambda x: to_numpy(jax_forward(jax_params, x))[:, 0]))
    if not panels:
        raise ValueError(figure_text("no_model", lang))
    data = load_dataset("moons")
    fig = new_figure(5.0 * len(panels) + 0.8, 4.4)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    cs = None
    for ax, (name, fn) in zip(axes, panels):
        cs = _draw_boundary(ax, fn, data, name, lang, trained) or cs
    if cs is not None:
        fig.colorbar(cs, ax=list(axes), label=figure_text("prob", lang), shrink=0.85)
    fig.suptitle(title or figure_text("boundary", lang))
    return show_figure(fig, show)


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
    fig = new_figure(10.0 if has_acc else 5.5, 3.8)
    axes = fig.subplots(1, 2 if has_acc else 1, squeeze=False)[0]
    series = [(axes[0], losses, val_losses, "loss")]
    if has_acc:
        series.append((axes[1], accs, val_accs, "accuracy"))
    for ax, train, val, what in series:
        for values, key, style in ((train, "train", "-"), (val, "val", "--")):
            if values is None:
                continue
            v = to_numpy(list(values)).ravel()
            ax.plot(np.arange(1, len(v) + 1), v, style, label=figure_text(key, lang), linewidth=1.6)
            if what == "loss":
                check_series(fig, v, f"{figure_text('loss', lang)} ({figure_text(key, lang)})", unit, lang, growth=key == "train")
        ax.set_xlabel(figure_text(unit, lang))
        ax.set_ylabel(figure_text(what, lang))
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(title or figure_text("curves", lang))
    return show_figure(fig, show)


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
                return to_numpy(m.weight)[:, 0]  # OIHW -> first input channel
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
    data = load_dataset("digits")
    x, y = data["x_val"].astype(np.float32), data["y_val"].astype(np.int64)
    if params is not None and hasattr(predict_fn, "apply"):
        import jax

        out = to_numpy(jax.jit(predict_fn.apply)(params, x[..., None]))
    elif hasattr(predict_fn, "parameters") and hasattr(predict_fn, "eval"):
        out = _torch_logits(predict_fn, x[:, None])
    else:
        out = to_numpy(predict_fn(x))
    pred = out.argmax(axis=1) if out.ndim == 2 else out.astype(np.int64)
    cm = np.zeros((10, 10), dtype=np.int64)
    np.add.at(cm, (y, pred), 1)
    acc = float(np.mean(pred == y))
    filters = _first_filters(predict_fn if params is None else None, params)

    fig = new_figure(10.5 if filters is not None else 5.5, 4.8)
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
    ax.set_xlabel(figure_text("pred", lang))
    ax.set_ylabel(figure_text("true", lang))
    ax.set_title(figure_text("confusion", lang, acc=acc))
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
        right.suptitle(figure_text("filters", lang))
    fig.suptitle(title or figure_text("digits", lang))
    if not _finite(out).all():
        say(fig, figure_text("nan_logits", lang), warn=True)
    elif trained and acc < 0.2:
        say(fig, figure_text("chance_digits", lang, acc=acc, chance=0.1), warn=True)
    return show_figure(fig, show)
