"""The figure of ex01_torch_mlp: what ``figure("ex01")`` draws from the student's own code."""

from __future__ import annotations

from typing import Any

from autograder.student.figure_canvas import figure_text, say
from autograder.student.figure_panels import moons_boundary
from autograder.student.figure_training import need_names, new_mlp


def figures(ex: str, ns: dict, lang: str) -> list[Any]:
    """The figures of ``figure("ex01")``, drawn from the notebook's names ``ns`` (``ex``: the exercise's
    full name, for the messages of a missing name)."""
    kw = {"lang": lang, "show": False}
    mlp_cls = need_names(ns, ex, ("MLP",), "ex01", lang)[0]
    fig = moons_boundary(torch_model=new_mlp(mlp_cls), title=figure_text("boundary_init", lang), **kw)
    say(fig, figure_text("from_ex01", lang))
    return [fig]
