"""The figure of ex09_autograd_tape: what ``figure("ex09")`` draws from the student's own code."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autograder.student import get_language
from autograder.student.figure_canvas import figure_text, new_figure, show_figure
from autograder.student.figure_training import need_names


def tape_graph(backward_graph: Callable, manual_grads: Callable | None = None, *, w: float = 0.5,
               x: float = 2.0, b: float = 0.3, lang: str | None = None, title: str | None = None,
               show: bool = True) -> Any:
    """The nodes ``backward_graph`` lists for ``L = (w*x + b)**2``, and ``manual_grads`` beside autograd.

    Args:
        backward_graph: the student's ``backward_graph(t)``.
        manual_grads: the student's ``manual_grads(w, x, b)``, or None.
        w: weight. x: input. b: bias (the example's point by default).
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
    fig = new_figure(7.5, 1.0 + 0.55 * max(len(names), 1))
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
        text = figure_text("grads", lang, w=w, x=x, b=b, gw=gw, gx=gx, gb=gb, aw=float(tw.grad), ax=float(tx.grad),
                  ab=float(tb.grad))
        ax.text(0.48, 0.5, text, ha="left", va="center", fontsize=9, family="monospace")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    fig.suptitle(title or figure_text("tape", lang))
    return show_figure(fig, show)


def figures(ex: str, ns: dict, lang: str) -> list[Any]:
    """The figures of ``figure("ex09")``, drawn from the notebook's names ``ns`` (``ex``: the exercise's
    full name, for the messages of a missing name)."""
    kw = {"lang": lang, "show": False}
    graph = need_names(ns, ex, ("backward_graph",), "ex09", lang)[0]
    manual = ns.get("manual_grads") if callable(ns.get("manual_grads")) else None
    return [tape_graph(graph, manual, **kw)]
