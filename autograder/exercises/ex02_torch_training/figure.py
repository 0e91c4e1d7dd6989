"""The figure of ex02_torch_training: what ``figure("ex02")`` draws from the student's own code."""

from __future__ import annotations

from typing import Any

from autograder.student.figure_canvas import figure_text, say
from autograder.student.figure_panels import moons_boundary, training_curves
from autograder.student.figure_training import MOONS_EPOCHS, MOONS_LR, train_torch_moons


def figures(ex: str, ns: dict, lang: str) -> list[Any]:
    """The figures of ``figure("ex02")``, drawn from the notebook's names ``ns`` (``ex``: the exercise's
    full name, for the messages of a missing name)."""
    kw = {"lang": lang, "show": False}
    model, h = train_torch_moons(ns, ex, lang)
    figs = [training_curves(h["loss"], h["val_loss"], h["acc"], h["val_acc"], unit="epoch", **kw),
            moons_boundary(torch_model=model, trained=True, **kw)]
    for fig in figs:
        say(fig, figure_text("from_ex02", lang, epochs=MOONS_EPOCHS, lr=MOONS_LR))
    return figs
