"""The figure of ex04_jax_mlp: what ``figure("ex04")`` draws from the student's own code."""

from __future__ import annotations

from typing import Any

from autograder.student.figure_canvas import figure_text, say
from autograder.student.figure_panels import moons_boundary
from autograder.student.figure_training import need_names, new_mlp


def figures(ex: str, ns: dict, lang: str) -> list[Any]:
    """The figures of ``figure("ex04")``, drawn from the notebook's names ``ns`` (``ex``: the exercise's
    full name, for the messages of a missing name)."""
    kw = {"lang": lang, "show": False}
    import jax

    init, forward = need_names(ns, ex, ("init_params", "mlp_forward"), "ex04", lang)
    torch_model = new_mlp(ns["MLP"]) if callable(ns.get("MLP")) else None
    params = init([2, 32, 32, 1], jax.random.PRNGKey(0))
    fig = moons_boundary(torch_model=torch_model, jax_params=params, jax_forward=forward,
                         title=figure_text("boundary_init", lang), **kw)
    say(fig, figure_text("from_ex04", lang))
    if torch_model is not None:
        say(fig, figure_text("torch_untrained", lang))
    return [fig]
