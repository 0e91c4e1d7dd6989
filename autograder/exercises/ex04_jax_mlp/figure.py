"""The figure of ex04_jax_mlp: what ``figure("ex04")`` draws from the student's own code."""

from __future__ import annotations

from typing import Any

from autograder.student.figure_canvas import _t, say
from autograder.student.figure_panels import moons_boundary
from autograder.student.figure_training import _need, _new_mlp


def figures(ex: str, ns: dict, lang: str) -> list[Any]:
    """The figures of ``figure("ex04")``, drawn from the notebook's names ``ns`` (``ex``: the exercise's
    full name, for the messages of a missing name)."""
    kw = {"lang": lang, "show": False}
    import jax

    init, forward = _need(ns, ex, ("init_params", "mlp_forward"), "ex04", lang)
    torch_model = _new_mlp(ns["MLP"]) if callable(ns.get("MLP")) else None
    params = init([2, 32, 32, 1], jax.random.PRNGKey(0))
    fig = moons_boundary(torch_model=torch_model, jax_params=params, jax_forward=forward,
                         title=_t("boundary_init", lang), **kw)
    say(fig, _t("from_ex04", lang))
    if torch_model is not None:
        say(fig, _t("torch_untrained", lang))
    return [fig]
