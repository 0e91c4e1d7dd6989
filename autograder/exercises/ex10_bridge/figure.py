"""The figure of ex10_bridge: what ``figure("ex10")`` draws from the student's own code."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from autograder.student import get_language
from autograder.student.figure_canvas import check_series, figure_text, new_figure, say, show_figure
from autograder.student.figure_training import (
    MOONS_EPOCHS,
    need_names,
    new_mlp,
    to_numpy,
    train_jax_moons,
    train_torch_moons,
)


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
    lt, lj = to_numpy(list(torch_losses)).ravel(), to_numpy(list(jax_losses)).ravel()
    fig = new_figure(6.5, 5.2)
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[2.2, 1.0])
    top.plot(np.arange(1, len(lt) + 1), lt, "-", label=figure_text("torch", lang), linewidth=2.2, alpha=0.75)
    top.plot(np.arange(1, len(lj) + 1), lj, "--", label=figure_text("jax", lang), linewidth=1.4)
    top.set_ylabel(figure_text("loss", lang))
    check_series(fig, lt, f"{figure_text('loss', lang)} ({figure_text('torch', lang)})", unit, lang)
    check_series(fig, lj, f"{figure_text('loss', lang)} ({figure_text('jax', lang)})", unit, lang)
    top.grid(alpha=0.3)
    top.legend()
    n = min(len(lt), len(lj))
    gap = np.abs(lt[:n] - lj[:n])
    bottom.plot(np.arange(1, n + 1), np.maximum(gap, 1e-12), color="tab:purple", linewidth=1.2)
    bottom.set_yscale("log")
    bottom.set_ylabel(figure_text("abs_diff", lang))
    bottom.set_xlabel(figure_text(unit, lang))
    bottom.grid(alpha=0.3)
    fig.suptitle(title or figure_text("bridge", lang))
    return show_figure(fig, show)


def figures(ex: str, ns: dict, lang: str) -> list[Any]:
    """The figures of ``figure("ex10")``, drawn from the notebook's names ``ns`` (``ex``: the exercise's
    full name, for the messages of a missing name)."""
    kw = {"lang": lang, "show": False}
    to_jax = need_names(ns, ex, ("torch_mlp_to_jax",), "ex10", lang)[0]
    mlp_cls = need_names(ns, ex, ("MLP",), "ex01", lang)[0]
    model = new_mlp(mlp_cls)
    params = to_jax(model)  # the same starting weights, before either run
    _, ht = train_torch_moons(ns, ex, lang, model, with_eval=False)
    _, hj = train_jax_moons(ns, ex, lang, params, with_eval=False)
    fig = bridge_overlay(ht["loss"], hj["loss"], **kw)
    say(fig, figure_text("from_ex10", lang, epochs=MOONS_EPOCHS))
    return [fig]
