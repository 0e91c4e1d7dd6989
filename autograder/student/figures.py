"""Figures drawn from the student's own code, as the seeds show them.

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
import inspect
import io
import pkgutil
import sys
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from autograder import _data
from autograder.student import get_language
from autograder.student.hints import resolve_exercise

# ----------------------------------------------------------------- texts
TEXT: dict[str, dict[str, str]] = {
    "en": {
        "torch": "PyTorch", "jax": "JAX",
        "boundary": "make_moons: decision boundary",
        "boundary_init": "make_moons: decision boundary at initialisation (untrained)",
        "val_acc": "val. accuracy {acc:.2f}",
        "train_pts": "training", "val_pts": "validation",
        "x1": "$x_1$", "x2": "$x_2$", "prob": "P(class 1)",
        "curves": "Training curves", "loss": "loss", "accuracy": "accuracy",
        "epoch": "epoch", "step": "step",
        "train": "training", "val": "validation",
        "digits": "load_digits: validation split", "confusion": "Confusion matrix (accuracy {acc:.3f})",
        "true": "true digit", "pred": "predicted digit", "filters": "First-layer filters",
        "untrained": "untrained",
        "bridge": "One set of starting weights, two frameworks",
        "abs_diff": "|PyTorch - JAX|",
        "bce": "BCE with logits, label y = {y:g}: derivatives from your nth_derivative",
        "logit": "logit z", "analytic": "closed form",
        "d0": "$L(z)$", "d1": "$dL/dz$", "d2": "$d^2L/dz^2$",
        "norms": "Per-example gradient norms ({n} examples, at initialisation)",
        "norm": "global L2 norm of one example's gradient", "count": "examples",
        "max_norm": "max_norm = {m:.3g} ({k} of {n} clipped)",
        "mean_norm": "norm of the averaged gradient", "plain_mean": "plain mean", "clipped_mean": "clip_and_average",
        "tape": "The tape of L = (w*x + b)**2: backward_graph(L)",
        "grads": "manual_grads({w}, {x}, {b}) = ({gw:.4g}, {gx:.4g}, {gb:.4g})\nautograd = ({aw:.4g}, {ax:.4g}, {ab:.4g})",
        "needs": "figure({ex!r}) needs {names} in your notebook: run the cells of {where} first",
        "no_figure": "there is no figure for {ex}",
        "no_model": "give at least one of torch_model or jax_params (with jax_forward)",
        "not_done": "No figure yet for {ex}: part of it still raises NotImplementedError. Write the exercise, "
                    "run its code cell and its check, then this cell again.",
        "failed": "figure({ex!r}) could not be drawn: your code raised {error}. Run check({ex!r}): it says what "
                  "to fix.",
        "compile_title": "torch.compile: graphs, graph breaks and recompiles (backend \"eager\")",
        "graphs": "graphs", "breaks": "graph breaks",
        "seed_clip": "the seed's clip (if)", "your_clip": "your clip_by_norm",
        "call": "call (batch size below)", "graphs_so_far": "graphs compiled so far",
        "default_compile": "torch.compile (automatic dynamic)", "any_batch": "your compile_for_any_batch",
        "compiled_loss": "compiled_train_step on make_moons",
        "ckpt_title": "Checkpointing: what is kept for the backward pass",
        "layers": "layers", "blocks": "blocks", "residuals": "residuals saved (JAX)",
        "saved_tensors": "tensors saved (PyTorch)", "plain": "plain", "checkpointed": "checkpointed",
        "spmd_title": "Data parallelism over a mesh of {n} device(s)",
        "rows": "rows of the batch", "device": "device",
        "mesh_of": "data_parallel_step, mesh of {n}",
    },
    "es": {
        "torch": "PyTorch", "jax": "JAX",
        "boundary": "make_moons: frontera de decisión",
        "boundary_init": "make_moons: frontera de decisión al inicializar (sin entrenar)",
        "val_acc": "exactitud de validación {acc:.2f}",
        "train_pts": "entrenamiento", "val_pts": "validación",
        "x1": "$x_1$", "x2": "$x_2$", "prob": "P(clase 1)",
        "curves": "Curvas de entrenamiento", "loss": "pérdida", "accuracy": "exactitud",
        "epoch": "época", "step": "paso",
        "train": "entrenamiento", "val": "validación",
        "digits": "load_digits: partición de validación", "confusion": "Matriz de confusión (exactitud {acc:.3f})",
        "true": "dígito real", "pred": "dígito predicho", "filters": "Filtros de la primera capa",
        "untrained": "sin entrenar",
        "bridge": "Unos mismos pesos iniciales, dos frameworks",
        "abs_diff": "|PyTorch - JAX|",
        "bce": "BCE con logits, etiqueta y = {y:g}: derivadas con tu nth_derivative",
        "logit": "logit z", "analytic": "forma cerrada",
        "d0": "$L(z)$", "d1": "$dL/dz$", "d2": "$d^2L/dz^2$",
        "norms": "Normas del gradiente por ejemplo ({n} ejemplos, al inicializar)",
        "norm": "norma L2 global del gradiente de un ejemplo", "count": "ejemplos",
        "max_norm": "max_norm = {m:.3g} ({k} de {n} recortados)",
        "mean_norm": "norma del gradiente promediado", "plain_mean": "media simple",
        "clipped_mean": "clip_and_average",
        "tape": "La cinta de L = (w*x + b)**2: backward_graph(L)",
        "grads": "manual_grads({w}, {x}, {b}) = ({gw:.4g}, {gx:.4g}, {gb:.4g})\nautograd = ({aw:.4g}, {ax:.4g}, {ab:.4g})",
        "needs": "figure({ex!r}) necesita {names} en tu cuaderno: ejecuta antes las celdas de {where}",
        "no_figure": "no hay figura para {ex}",
        "no_model": "da al menos torch_model o jax_params (con jax_forward)",
        "not_done": "Todavía no hay figura de {ex}: una parte sigue lanzando NotImplementedError. Escribe el "
                    "ejercicio, ejecuta su celda de código y su comprobación, y después otra vez esta celda.",
        "failed": "no se pudo dibujar figure({ex!r}): tu código lanzó {error}. Ejecuta check({ex!r}): dice qué "
                  "corregir.",
        "compile_title": "torch.compile: grafos, rupturas del grafo y recompilaciones (backend \"eager\")",
        "graphs": "grafos", "breaks": "rupturas del grafo",
        "seed_clip": "el recorte de la fuente (if)", "your_clip": "tu clip_by_norm",
        "call": "llamada (tamaño de lote debajo)", "graphs_so_far": "grafos compilados hasta ahora",
        "default_compile": "torch.compile (dinámico automático)", "any_batch": "tu compile_for_any_batch",
        "compiled_loss": "compiled_train_step en make_moons",
        "ckpt_title": "Checkpointing: lo que se guarda para la pasada hacia atrás",
        "layers": "capas", "blocks": "bloques", "residuals": "residuos guardados (JAX)",
        "saved_tensors": "tensores guardados (PyTorch)", "plain": "sin checkpoint", "checkpointed": "con checkpoint",
        "spmd_title": "Paralelismo de datos sobre una malla de {n} dispositivo(s)",
        "rows": "filas del lote", "device": "dispositivo",
        "mesh_of": "data_parallel_step, malla de {n}",
    },
}

# Training settings of the figures (the contract's: make_moons MLP [2, 32, 32, 1], Adam 0.01, 300 epochs).
MOONS_EPOCHS = 300
MOONS_LR = 0.01
DIGITS_STEPS = 60
DIGITS_LR = 0.01


def _t(key: str, lang: str, **fields: Any) -> str:
    text = TEXT[lang][key]
    return text.format(**fields) if fields else text


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
def _draw_boundary(ax: Any, logit_fn: Callable[[Any], Any], data: dict, name: str, lang: str) -> Any:
    import numpy as np

    x_all = np.concatenate([data["x_train"], data["x_val"]])
    lo, hi = x_all.min(axis=0) - 0.5, x_all.max(axis=0) + 0.5
    g1, g2 = np.meshgrid(np.linspace(lo[0], hi[0], 160), np.linspace(lo[1], hi[1], 160))
    grid = np.stack([g1.ravel(), g2.ravel()], axis=1).astype(np.float32)
    prob = _sigmoid(logit_fn(grid)).reshape(g1.shape)
    cs = ax.contourf(g1, g2, prob, levels=np.linspace(0, 1, 11), cmap="RdBu_r", alpha=0.55)
    ax.contour(g1, g2, prob, levels=[0.5], colors="k", linewidths=1.5)
    val_acc = float(np.mean((logit_fn(data["x_val"].astype(np.float32)) >= 0) == (data["y_val"] == 1)))
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
                   lang: str | None = None, title: str | None = None, show: bool = True) -> Any:
    """The make_moons decision boundary of a PyTorch and/or a JAX MLP, side by side.

    Args:
        torch_model: an ``nn.Module`` mapping ``(N, 2)`` to ``(N, 1)`` logits, or None.
        jax_params: params for ``jax_forward``, or None.
        jax_forward: ``jax_forward(params, x)`` -> ``(N, 1)`` logits (e.g. ``mlp_forward``).
        lang: ``"en"``/``"es"``; default: the notebook's language.
        title: the figure's title (default: "make_moons: decision boundary").
        show: display inline when running in IPython.

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
        cs = _draw_boundary(ax, fn, data, name, lang)
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
                  show: bool = True) -> Any:
    """Confusion matrix on the digits validation split, and the first-layer filters.

    Args:
        predict_fn: a torch CNN (``(N, 1, 8, 8)`` -> logits), a Flax module (with ``params``,
            ``(N, 8, 8, 1)`` -> logits), or any callable taking numpy ``(N, 8, 8)`` images and
            returning logits ``(N, 10)`` or labels ``(N,)``.
        params: the Flax variables (``{"params": ...}``) when ``predict_fn`` is a Flax module.
        lang: ``"en"``/``"es"``; default: the notebook's language.
        title: the figure's title.
        show: display inline when running in IPython.

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
    return _show(fig, show)


# ----------------------------------------------------------------- bridge
def bridge_overlay(torch_losses: Sequence[float], jax_losses: Sequence[float], *, unit: str = "epoch",
                   lang: str | None = None, title: str | None = None, show: bool = True) -> Any:
    """PyTorch and JAX training losses from the same starting weights, overlaid, and their gap.

    Args:
        torch_losses: per-epoch losses of the PyTorch run.
        jax_losses: per-step losses of the JAX run.
        unit: ``"epoch"`` or ``"step"`` (the x-axis label).
        lang: ``"en"``/``"es"``; default: the notebook's language.
        title: the figure's title.
        show: display inline when running in IPython.

    Returns:
        The matplotlib Figure.
    """
    import numpy as np

    lang = get_language(lang)
    lt, lj = _np(list(torch_losses)).ravel(), _np(list(jax_losses)).ravel()
    fig = _new_figure(6.5, 5.2)
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[2.2, 1.0])
    top.plot(np.arange(1, len(lt) + 1), lt, "-", label=_t("torch", lang), linewidth=2.2, alpha=0.75)
    top.plot(np.arange(1, len(lj) + 1), lj, "--", label=_t("jax", lang), linewidth=1.4)
    top.set_ylabel(_t("loss", lang))
    top.grid(alpha=0.3)
    top.legend()
    n = min(len(lt), len(lj))
    gap = np.abs(lt[:n] - lj[:n])
    bottom.plot(np.arange(1, n + 1), np.maximum(gap, 1e-12), color="tab:purple", linewidth=1.2)
    bottom.set_yscale("log")
    bottom.set_ylabel(_t("abs_diff", lang))
    bottom.set_xlabel(_t(unit, lang))
    bottom.grid(alpha=0.3)
    fig.suptitle(title or _t("bridge", lang))
    return _show(fig, show)


# ----------------------------------------------------------------- nth_derivative
def bce_derivatives(nth_derivative: Callable, *, label: float = 1.0, lang: str | None = None,
                    title: str | None = None, show: bool = True) -> Any:
    """The binary cross-entropy of one logit and its first two derivatives, from ``nth_derivative``.

    Args:
        nth_derivative: the student's ``nth_derivative(f, n)``.
        label: the target y (0 or 1).
        lang: ``"en"``/``"es"``; default: the notebook's language.
        title: the figure's title.
        show: display inline when running in IPython.

    Returns:
        The matplotlib Figure: the three curves, each with its closed form dotted.
    """
    import jax
    import jax.numpy as jnp
    import numpy as np

    lang = get_language(lang)
    y = float(label)

    def loss(z: Any) -> Any:  # BCE of one logit for label y, written as softplus
        return jax.nn.softplus(z) - y * z

    z = np.linspace(-8.0, 8.0, 241).astype(np.float32)
    curves = []
    for n in range(3):
        fn = nth_derivative(loss, n)
        try:
            values = np.asarray(jax.jit(jax.vmap(fn))(jnp.asarray(z)), dtype=np.float64)
        except Exception:  # not vmappable: fall back to a coarse loop
            z_small = z[::6]
            values = np.interp(z, z_small, [float(fn(jnp.float32(v))) for v in z_small])
        curves.append(values)
    s = _sigmoid(z.astype(np.float64))
    closed = [np.logaddexp(0.0, z) - y * z, s - y, s * (1.0 - s)]
    fig = _new_figure(10.5, 3.6)
    axes = fig.subplots(1, 3)
    for n, ax in enumerate(axes):
        ax.plot(z, curves[n], "-", linewidth=2.2, color=f"C{n}", label=_t(f"d{n}", lang))
        ax.plot(z, closed[n], ":", linewidth=1.4, color="k", label=_t("analytic", lang))
        ax.set_xlabel(_t("logit", lang))
        ax.set_title(_t(f"d{n}", lang))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title or _t("bce", lang, y=y))
    return _show(fig, show)


# ----------------------------------------------------------------- per-example grads
def grad_norms(per_example: Any, clipped_mean: Any = None, max_norm: float | None = None, *,
               lang: str | None = None, title: str | None = None, show: bool = True) -> Any:
    """Histogram of per-example gradient norms, with the clipping threshold.

    Args:
        per_example: a pytree whose leaves have a leading axis N (``per_example_grads``'s output).
        clipped_mean: ``clip_and_average(per_example, max_norm)``, or None.
        max_norm: the clipping threshold, or None.
        lang: ``"en"``/``"es"``; default: the notebook's language.
        title: the figure's title.
        show: display inline when running in IPython.

    Returns:
        The matplotlib Figure.
    """
    import jax
    import numpy as np

    lang = get_language(lang)
    leaves = [np.asarray(leaf, np.float64) for leaf in jax.tree_util.tree_leaves(per_example)]
    n = len(leaves[0])
    norms = np.sqrt(sum(np.square(leaf).reshape(n, -1).sum(axis=1) for leaf in leaves))
    has_bar = clipped_mean is not None
    fig = _new_figure(10.0 if has_bar else 5.5, 3.8)
    axes = fig.subplots(1, 2 if has_bar else 1, squeeze=False)[0]
    axes[0].hist(norms, bins=30, color="tab:blue", alpha=0.8)
    if max_norm is not None:
        k = int(np.sum(norms > max_norm))
        axes[0].axvline(max_norm, color="tab:red", linestyle="--",
                        label=_t("max_norm", lang, m=float(max_norm), k=k, n=n))
        axes[0].legend(fontsize=8)
    axes[0].set_xlabel(_t("norm", lang))
    axes[0].set_ylabel(_t("count", lang))
    if has_bar:
        plain = np.sqrt(sum((leaf.mean(axis=0) ** 2).sum() for leaf in leaves))
        clipped = np.sqrt(sum((np.asarray(leaf, np.float64) ** 2).sum()
                              for leaf in jax.tree_util.tree_leaves(clipped_mean)))
        axes[1].bar([_t("plain_mean", lang), _t("clipped_mean", lang)], [plain, clipped],
                    color=["tab:gray", "tab:orange"])
        axes[1].set_ylabel(_t("mean_norm", lang))
    fig.suptitle(title or _t("norms", lang, n=n))
    return _show(fig, show)


# ----------------------------------------------------------------- the tape
def tape_graph(backward_graph: Callable, manual_grads: Callable | None = None, *, w: float = 0.5,
               x: float = 2.0, b: float = 0.3, lang: str | None = None, title: str | None = None,
               show: bool = True) -> Any:
    """The nodes ``backward_graph`` lists for ``L = (w*x + b)**2``, and ``manual_grads`` beside autograd.

    Args:
        backward_graph: the student's ``backward_graph(t)``.
        manual_grads: the student's ``manual_grads(w, x, b)``, or None.
        w: weight. x: input. b: bias (the seed's Figure 2 values by default).
        lang: ``"en"``/``"es"``; default: the notebook's language.
        title: the figure's title.
        show: display inline when running in IPython.

    Returns:
        The matplotlib Figure.
    """
    import torch

    lang = get_language(lang)
    tw, tx, tb = (torch.tensor(float(v), requires_grad=True) for v in (w, x, b))
    loss = (tw * tx + tb) ** 2
    names = list(backward_graph(loss))
    loss.backward()
    fig = _new_figure(7.5, 1.0 + 0.55 * max(len(names), 1))
    ax = fig.subplots()
    ax.set_axis_off()
    n = max(len(names), 1)
    for i, name in enumerate(names):  # the list as returned: depth-first pre-order
        yy = 1.0 - (i + 0.5) / n
        ax.text(0.04, yy, f"{i + 1}.", ha="right", va="center", fontsize=10, color="0.4")
        ax.text(0.06, yy, str(name), ha="left", va="center", fontsize=10, family="monospace",
                bbox={"boxstyle": "round", "facecolor": "#fde8c8" if name == "AccumulateGrad" else "#e7f0fa"})
    if manual_grads is not None:
        gw, gx, gb = (float(v) for v in manual_grads(w, x, b))
        text = _t("grads", lang, w=w, x=x, b=b, gw=gw, gx=gx, gb=gb, aw=float(tw.grad), ax=float(tx.grad),
                  ab=float(tb.grad))
        ax.text(0.48, 0.5, text, ha="left", va="center", fontsize=9, family="monospace")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    fig.suptitle(title or _t("tape", lang))
    return _show(fig, show)


# ----------------------------------------------------------------- torch.compile
def _seed_clip(x: Any, max_norm: float) -> Any:
    """The seed's clip: a Python branch on a tensor's value (a graph break under TorchDynamo)."""
    if x.norm() > max_norm:
        return x * (max_norm / x.norm())
    return x


def _graphs_compiled() -> int:
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


COMPILE_BATCHES = (16, 16, 24, 40, 9, 33, 57)


def compile_report(clip_by_norm: Callable, graph_report: Callable, compile_for_any_batch: Callable | None = None,
                   compiled_train_step: Callable | None = None, *, steps: int = 150, lang: str | None = None,
                   title: str | None = None, show: bool = True) -> Any:
    """Graphs and graph breaks of two clips, compiles over a sequence of batch sizes, a compiled training run.

    Args:
        clip_by_norm: the student's ``clip_by_norm``.
        graph_report: the student's ``graph_report``.
        compile_for_any_batch: the student's ``compile_for_any_batch``, or None.
        compiled_train_step: the student's ``compiled_train_step``, or None.
        steps: training steps of the compiled step on make_moons.
        lang: ``"en"``/``"es"``; default: the notebook's language.
        title: the figure's title.
        show: display inline when running in IPython.

    Returns:
        The matplotlib Figure (backend "eager" throughout).
    """
    import numpy as np
    import torch
    import torch._dynamo  # noqa: F401 - the counters below live there

    lang = get_language(lang)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        x = torch.randn(4, 5) * 3.0
        reports = [graph_report(_seed_clip, x, 1.0), graph_report(clip_by_norm, x, 1.0)]
        panels = 1 + (compile_for_any_batch is not None) + (compiled_train_step is not None)
        fig = _new_figure(4.2 * panels, 3.8)
        axes = list(np.atleast_1d(fig.subplots(1, panels)))
        ax = axes.pop(0)
        pos = np.arange(2)
        ax.bar(pos - 0.18, [int(r[0]) for r in reports], 0.36, label=_t("graphs", lang), color="tab:blue")
        ax.bar(pos + 0.18, [int(r[1]) for r in reports], 0.36, label=_t("breaks", lang), color="tab:red")
        ax.set_xticks(pos, [_t("seed_clip", lang), _t("your_clip", lang)], fontsize=8)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.legend(fontsize=8)
        if compile_for_any_batch is not None:
            ax = axes.pop(0)
            curves = {}
            for key, make in (("default_compile", lambda m: torch.compile(m, backend="eager")),
                              ("any_batch", lambda m: compile_for_any_batch(m, "eager"))):
                model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
                compiled, start, counts = make(model), _graphs_compiled(), []
                for n in COMPILE_BATCHES:
                    compiled(torch.randn(n, 3))
                    counts.append(_graphs_compiled() - start)
                curves[key] = counts
            calls = np.arange(1, len(COMPILE_BATCHES) + 1)
            ax.step(calls, curves["default_compile"], where="mid", color="tab:gray", linewidth=2,
                    label=_t("default_compile", lang))
            ax.step(calls, curves["any_batch"], where="mid", color="tab:orange", linewidth=2, linestyle="--",
                    label=_t("any_batch", lang))
            ax.set_xticks(calls, [str(n) for n in COMPILE_BATCHES], fontsize=8)
            ax.set_xlabel(_t("call", lang))
            ax.set_ylabel(_t("graphs_so_far", lang))
            ax.yaxis.get_major_locator().set_params(integer=True)
            ax.legend(fontsize=8)
        if compiled_train_step is not None:
            ax = axes.pop(0)
            data = _dataset("moons")
            xt, yt = torch.as_tensor(data["x_train"]), torch.as_tensor(data["y_train"])[:, None]
            model = torch.nn.Sequential(torch.nn.Linear(2, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
            opt = torch.optim.Adam(model.parameters(), lr=0.01)
            step = compiled_train_step(model, opt, torch.nn.functional.binary_cross_entropy_with_logits, "eager")
            losses = [float(step(xt, yt)) for _ in range(steps)]
            ax.plot(np.arange(1, steps + 1), losses, color="tab:green")
            ax.set_xlabel(_t("step", lang))
            ax.set_ylabel(_t("loss", lang))
            ax.set_title(_t("compiled_loss", lang), fontsize=9)
            ax.grid(alpha=0.3)
    fig.suptitle(title or _t("compile_title", lang))
    return _show(fig, show)


# ----------------------------------------------------------------- checkpointing
def _plain_mlp(params: Any, x: Any) -> Any:
    import jax

    h = x
    for i, (w, b) in enumerate(zip(params["W"], params["b"])):
        h = h @ w + b
        if i < len(params["W"]) - 1:
            h = jax.nn.relu(h)
    return h


def checkpoint_savings(checkpointed_mlp_forward: Callable | None, saved_residual_count: Callable | None,
                       torch_checkpointed: Callable | None = None, torch_saved_tensor_count: Callable | None = None,
                       *, depths: Sequence[int] = (2, 3, 4, 5, 6), lang: str | None = None,
                       title: str | None = None, show: bool = True) -> Any:
    """What is kept for the backward pass, with and without checkpoints, as the network deepens.

    Args:
        checkpointed_mlp_forward: the student's JAX forward (compared with a plain MLP forward).
        saved_residual_count: the student's residual counter (counts both curves).
        torch_checkpointed: the student's ``torch_checkpointed``, or None.
        torch_saved_tensor_count: the student's saved-tensor counter (counts both curves), or None.
        depths: numbers of layers / blocks.
        lang: ``"en"``/``"es"``; default: the notebook's language.
        title: the figure's title.
        show: display inline when running in IPython.

    Returns:
        The matplotlib Figure.
    """
    import numpy as np

    lang = get_language(lang)
    jax_side = checkpointed_mlp_forward is not None and saved_residual_count is not None
    torch_side = torch_checkpointed is not None and torch_saved_tensor_count is not None
    fig = _new_figure(4.6 * (jax_side + torch_side), 3.8)
    axes = list(np.atleast_1d(fig.subplots(1, jax_side + torch_side)))
    rng = np.random.default_rng(0)
    if jax_side:
        import jax.numpy as jnp

        plain, ckpt = [], []
        for depth in depths:
            dims = [4] + [16] * (depth - 1) + [1]
            params = {"W": [jnp.asarray(rng.standard_normal((a, b)), jnp.float32) for a, b in zip(dims, dims[1:])],
                      "b": [jnp.zeros(b, jnp.float32) for b in dims[1:]]}
            x = jnp.asarray(rng.standard_normal((8, 4)), jnp.float32)
            plain.append(int(saved_residual_count(_plain_mlp, params, x)))
            ckpt.append(int(saved_residual_count(checkpointed_mlp_forward, params, x)))
        ax = axes.pop(0)
        ax.plot(depths, plain, "o-", color="tab:gray", label=_t("plain", lang))
        ax.plot(depths, ckpt, "s--", color="tab:purple", label=_t("checkpointed", lang))
        ax.set_xticks(list(depths))
        ax.set_xlabel(_t("layers", lang))
        ax.set_ylabel(_t("residuals", lang))
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    if torch_side:
        import torch

        plain, ckpt = [], []
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            for depth in depths:
                blocks = [torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Tanh()) for _ in range(depth)]
                x = torch.randn(8, 16)

                def run_plain(blocks: list = blocks, x: Any = x) -> Any:
                    h = x
                    for blk in blocks:
                        h = blk(h)
                    return h.sum()

                plain.append(int(torch_saved_tensor_count(run_plain)))
                ckpt.append(int(torch_saved_tensor_count(lambda blocks=blocks, x=x: torch_checkpointed(blocks, x).sum())))
        ax = axes.pop(0)
        ax.plot(depths, plain, "o-", color="tab:gray", label=_t("plain", lang))
        ax.plot(depths, ckpt, "s--", color="tab:red", label=_t("checkpointed", lang))
        ax.set_xticks(list(depths))
        ax.set_xlabel(_t("blocks", lang))
        ax.set_ylabel(_t("saved_tensors", lang))
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle(title or _t("ckpt_title", lang))
    return _show(fig, show)


# ----------------------------------------------------------------- SPMD
def mesh_layout(make_data_mesh: Callable, shard_batch: Callable, data_parallel_step: Callable | None = None, *,
                rows: int = 32, steps: int = 100, lang: str | None = None, title: str | None = None,
                show: bool = True) -> Any:
    """Which device holds which rows of a batch, and the same training run on one device and on all.

    Args:
        make_data_mesh: the student's ``make_data_mesh``.
        shard_batch: the student's ``shard_batch``.
        data_parallel_step: the student's ``data_parallel_step``, or None.
        rows: rows of the batch drawn in the first panel (a multiple of the device count).
        steps: Adam steps of the training runs (make_moons, a small tanh MLP).
        lang: ``"en"``/``"es"``; default: the notebook's language.
        title: the figure's title.
        show: display inline when running in IPython.

    Returns:
        The matplotlib Figure.
    """
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    lang = get_language(lang)
    mesh = make_data_mesh()
    n = int(mesh.devices.size)
    rows = max(n, rows // n * n)
    xs = shard_batch(jnp.arange(rows * 2, dtype=jnp.float32).reshape(rows, 2), mesh)
    order = {int(d.id): i for i, d in enumerate(mesh.devices.flat)}
    fig = _new_figure(10.0 if data_parallel_step is not None else 5.5, 3.8)
    axes = list(np.atleast_1d(fig.subplots(1, 2 if data_parallel_step is not None else 1)))
    ax = axes.pop(0)
    for shard in xs.addressable_shards:
        start, stop, _ = shard.index[0].indices(rows)
        lane = order.get(int(shard.device.id), 0)
        ax.barh(lane, stop - start, left=start, color=f"C{lane % 10}", edgecolor="white")
        ax.text((start + stop) / 2, lane, f"{start}:{stop}", ha="center", va="center", fontsize=7, color="white")
    ax.set_yticks(range(n), [str(d.id) for d in mesh.devices.flat])
    ax.set_ylabel(_t("device", lang))
    ax.set_xlabel(_t("rows", lang))
    ax.set_xlim(0, rows)
    if data_parallel_step is not None:
        ax = axes.pop(0)
        data = _dataset("moons")
        x_all, y_all = data["x_train"], data["y_train"]
        keep = len(x_all) // n * n
        rng = np.random.default_rng(0)
        p0 = {"w1": (rng.standard_normal((2, 16)) / np.sqrt(2)).astype(np.float32), "b1": np.zeros(16, np.float32),
              "w2": (rng.standard_normal((16, 1)) / 4).astype(np.float32), "b2": np.zeros(1, np.float32)}

        def loss_fn(params: Any, x: Any, y: Any) -> Any:
            z = (jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"])[:, 0]
            return jnp.mean(jax.nn.softplus(z) - z * y)  # BCE with logits

        for size, style in sorted({(1, "-"), (n, "--")}):
            sub = make_data_mesh(size)
            opt = optax.adam(0.05)
            step = data_parallel_step(loss_fn, opt, sub)
            params = jax.device_put(p0, NamedSharding(sub, P()))
            state = jax.device_put(opt.init(params), NamedSharding(sub, P()))
            xb, yb = shard_batch(jnp.asarray(x_all[:keep]), sub), shard_batch(jnp.asarray(y_all[:keep]), sub)
            history = []
            for _step in range(steps):
                params, state, loss = step(params, state, xb, yb)
                history.append(float(loss))
            ax.plot(np.arange(1, steps + 1), history, style, linewidth=2 if size == 1 else 1.4,
                    label=_t("mesh_of", lang, n=size))
        ax.set_xlabel(_t("step", lang))
        ax.set_ylabel(_t("loss", lang))
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle(title or _t("spmd_title", lang, n=n))
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


def _train_digits_torch(ns: dict, ex: str, lang: str) -> tuple[Any, bool]:
    import numpy as np
    import torch

    cnn = _need(ns, ex, ("CNN",), "ex03", lang)[0]
    model = _seeded(cnn)
    step = ns.get("train_step")
    if not callable(step):
        return model, False
    data = _dataset("digits")
    x = torch.as_tensor(data["x_train"][:, None].astype(np.float32))
    y = torch.as_tensor(data["y_train"].astype(np.int64))
    opt = torch.optim.Adam(model.parameters(), lr=DIGITS_LR)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(1)  # dropout masks
        for _ in range(DIGITS_STEPS):
            step(model, opt, x, y, torch.nn.functional.cross_entropy)
    return model, True


def _flax_init(model: Any, x: Any) -> Any:
    """Variables shaped as ``model.init`` makes them, filled by numpy (LeCun-normal kernels, zero rest).

    ``jax.eval_shape`` traces the student's module without compiling, which saves
    seconds of XLA compile time for the random initialisers on CPU.
    """
    import jax
    import numpy as np

    shapes = jax.eval_shape(model.init, jax.random.PRNGKey(0), x)
    rng = np.random.RandomState(0)

    def fill(path: Any, leaf: Any) -> Any:
        if "kernel" in jax.tree_util.keystr(path) and len(leaf.shape) >= 2:
            fan_in = int(np.prod(leaf.shape[:-1]))
            value = rng.standard_normal(leaf.shape) / np.sqrt(fan_in)
        else:
            value = np.zeros(leaf.shape)
        return jax.device_put(value.astype(leaf.dtype))

    return jax.tree_util.tree_map_with_path(fill, shapes)


def _train_digits_flax(ns: dict, ex: str, lang: str) -> tuple[Any, Any]:
    import jax.numpy as jnp
    import numpy as np
    import optax

    flax_cnn, to_nhwc, make_step = _need(ns, ex, ("FlaxCNN", "to_nhwc", "make_flax_train_step"), "ex07", lang)
    model = flax_cnn(num_classes=10)
    data = _dataset("digits")
    x = to_nhwc(data["x_train"][:, None].astype(np.float32))
    y = jnp.asarray(data["y_train"].astype(np.int32))
    params = _flax_init(model, x[:1])
    opt = optax.adam(DIGITS_LR)
    step = make_step(model, opt)
    state = opt.init(params)
    for _ in range(DIGITS_STEPS):
        params, state, _loss = step(params, state, x, y)
    return model, params


# ----------------------------------------------------------------- one entry point
def _figures_for(ex: str, ns: dict, lang: str) -> list[Any]:
    kw = {"lang": lang, "show": False}
    if ex == "ex01_torch_mlp":
        mlp_cls = _need(ns, ex, ("MLP",), "ex01", lang)[0]
        return [moons_boundary(torch_model=_new_mlp(mlp_cls), title=_t("boundary_init", lang), **kw)]
    if ex == "ex02_torch_training":
        model, h = _train_torch_moons(ns, ex, lang)
        return [training_curves(h["loss"], h["val_loss"], h["acc"], h["val_acc"], unit="epoch", **kw),
                moons_boundary(torch_model=model, **kw)]
    if ex == "ex03_torch_cnn":
        model, trained = _train_digits_torch(ns, ex, lang)
        title = None if trained else f"{_t('digits', lang)} ({_t('untrained', lang)})"
        return [digits_report(model, title=title, **kw)]
    if ex == "ex04_jax_mlp":
        import jax

        init, forward = _need(ns, ex, ("init_params", "mlp_forward"), "ex04", lang)
        torch_model = _new_mlp(ns["MLP"]) if callable(ns.get("MLP")) else None
        params = init([2, 32, 32, 1], jax.random.PRNGKey(0))
        return [moons_boundary(torch_model=torch_model, jax_params=params, jax_forward=forward,
                               title=_t("boundary_init", lang), **kw)]
    if ex == "ex05_jit_train_step":
        params, h = _train_jax_moons(ns, ex, lang)
        torch_model = None
        if all(callable(ns.get(n)) for n in ("MLP", "train_step", "bce_with_logits")):
            torch_model, _ = _train_torch_moons(ns, ex, lang, with_eval=False)
        out = [moons_boundary(torch_model=torch_model, jax_params=params, jax_forward=ns["mlp_forward"], **kw)]
        out.append(training_curves(h["loss"], h["val_loss"] or None, h["acc"] or None, h["val_acc"] or None,
                                   unit="step", **kw))
        return out
    if ex == "ex06_per_example_grads":
        import jax
        import jax.numpy as jnp
        import numpy as np

        peg, clip = _need(ns, ex, ("per_example_grads", "clip_and_average"), "ex06", lang)
        init, loss_fn = _need(ns, ex, ("init_params", "bce_loss"), "ex04", lang)
        data = _dataset("moons")
        params = init([2, 32, 32, 1], jax.random.PRNGKey(0))
        g = peg(loss_fn, params, jnp.asarray(data["x_train"]), jnp.asarray(data["y_train"]))
        leaves = [np.asarray(leaf, np.float64) for leaf in jax.tree_util.tree_leaves(g)]
        norms = np.sqrt(sum((leaf.reshape(leaf.shape[0], -1) ** 2).sum(axis=1) for leaf in leaves))
        max_norm = float(np.median(norms))
        return [grad_norms(g, clip(g, max_norm), max_norm, **kw)]
    if ex == "ex07_flax_cnn":
        model, params = _train_digits_flax(ns, ex, lang)
        return [digits_report(model, params, **kw)]
    if ex == "ex08_jax_transforms":
        return [bce_derivatives(_need(ns, ex, ("nth_derivative",), "ex08", lang)[0], **kw)]
    if ex == "ex09_autograd_tape":
        graph = _need(ns, ex, ("backward_graph",), "ex09", lang)[0]
        manual = ns.get("manual_grads") if callable(ns.get("manual_grads")) else None
        return [tape_graph(graph, manual, **kw)]
    if ex == "ex10_bridge":
        to_jax = _need(ns, ex, ("torch_mlp_to_jax",), "ex10", lang)[0]
        mlp_cls = _need(ns, ex, ("MLP",), "ex01", lang)[0]
        model = _new_mlp(mlp_cls)
        params = to_jax(model)  # the same starting weights, before either run
        _, ht = _train_torch_moons(ns, ex, lang, model, with_eval=False)
        _, hj = _train_jax_moons(ns, ex, lang, params, with_eval=False)
        return [bridge_overlay(ht["loss"], hj["loss"], **kw)]
    if ex == "ex11_torch_compile":
        clip, report = _need(ns, ex, ("clip_by_norm", "graph_report"), "ex11", lang)
        any_batch = ns.get("compile_for_any_batch") if callable(ns.get("compile_for_any_batch")) else None
        step = ns.get("compiled_train_step") if callable(ns.get("compiled_train_step")) else None
        return [compile_report(clip, report, any_batch, step, **kw)]
    if ex == "ex12_checkpointing":
        fwd, count = _need(ns, ex, ("checkpointed_mlp_forward", "saved_residual_count"), "ex12", lang)
        tck, tcount = (ns.get(n) if callable(ns.get(n)) else None
                       for n in ("torch_checkpointed", "torch_saved_tensor_count"))
        return [checkpoint_savings(fwd, count, tck, tcount, **kw)]
    if ex == "ex13_spmd":
        mesh, shard = _need(ns, ex, ("make_data_mesh", "shard_batch"), "ex13", lang)
        step = ns.get("data_parallel_step") if callable(ns.get("data_parallel_step")) else None
        return [mesh_layout(mesh, shard, step, **kw)]
    raise ValueError(_t("no_figure", lang, ex=ex))


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
    ex = resolve_exercise(exercise, lang)
    if namespace is None:
        namespace = sys._getframe(1).f_globals
    with _one_torch_thread():
        figs = _figures_for(ex, dict(namespace), lang)
    for fig in figs:
        _show(fig, show)
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
    ex = resolve_exercise(exercise, lang)  # a wrong name is the caller's typo: raised
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
