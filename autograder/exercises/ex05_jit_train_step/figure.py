"""The figure of ex05_jit_train_step: what ``figure("ex05")`` draws from the student's own code."""

from __future__ import annotations

from typing import Any

from autograder.student.figure_canvas import check_series, figure_text, say
from autograder.student.figure_panels import moons_boundary, training_curves
from autograder.student.figure_training import MOONS_EPOCHS, MOONS_LR, train_jax_moons, train_torch_moons


def figures(ex: str, ns: dict, lang: str) -> list[Any]:
    """The figures of ``figure("ex05")``, drawn from the notebook's names ``ns`` (``ex``: the exercise's
    full name, for the messages of a missing name)."""
    kw = {"lang": lang, "show": False}
    params, h = train_jax_moons(ns, ex, lang)
    torch_model = None
    if all(callable(ns.get(n)) for n in ("MLP", "train_step", "bce_with_logits")):
        torch_model, _ = train_torch_moons(ns, ex, lang, with_eval=False)
    out = [moons_boundary(torch_model=torch_model, jax_params=params, jax_forward=ns["mlp_forward"], trained=True,
                          **kw)]
    out.append(training_curves(h["loss"], h["val_loss"] or None, h["acc"] or None, h["val_acc"] or None,
                               unit="step", **kw))
    key = "from_ex05" if callable(ns.get("make_train_step")) else "from_ex05_fit"
    for fig in out:
        say(fig, figure_text(key, lang, steps=MOONS_EPOCHS, lr=MOONS_LR))
        check_series(fig, h["loss"], f"{figure_text('loss', lang)} ({figure_text('train', lang)})", "step", lang)
    if torch_model is not None:
        say(out[0], figure_text("torch_trained", lang))
    return out
