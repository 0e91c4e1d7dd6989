"""The figure of __NAME__: what ``figure("__SHORT__")`` draws from the student's own code."""

from __future__ import annotations

from typing import Any

import numpy as np

from autograder.core.i18n import render
from autograder.student.figure_canvas import new_figure
from autograder.student.figure_training import need_names, to_numpy


def figures(ex: str, ns: dict, lang: str) -> list[Any]:
    """The figures of ``figure("__SHORT__")``, drawn from the notebook's names ``ns`` (``ex``: the exercise's
    full name, for the messages of a missing name): a fixed input and the student's output, side by side."""
    import torch

    fn = need_names(ns, ex, ("__FUNC__",), "__SHORT__", lang)[0]
    x = np.random.default_rng(0).normal(2.0, 3.0, (8, 16)).astype(np.float32)
    y = to_numpy(fn(torch.from_numpy(x)))
    fig = new_figure(8, 3)
    for ax, data, label in zip(fig.subplots(1, 2), (x, y), ("x", "__FUNC__(x)")):
        vmax = float(np.abs(data).max()) or 1.0
        ax.imshow(data, cmap="bwr", vmin=-vmax, vmax=vmax)
        ax.set_title(label)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(render("__KEY___FIGURE", lang, call="__FUNC__(x)"))
    return [fig]
