"""The figure of ex03_torch_cnn: what ``figure("ex03")`` draws from the student's own code."""

from __future__ import annotations

from typing import Any

from autograder.student.figure_canvas import figure_text, say
from autograder.student.figure_panels import digits_report
from autograder.student.figure_training import DIGITS_LR, DIGITS_STEPS, load_dataset, need_names, seeded


def _train_digits_torch(ns: dict, ex: str, lang: str) -> tuple[Any, bool]:
    import numpy as np
    import torch

    cnn = need_names(ns, ex, ("CNN",), "ex03", lang)[0]
    model = seeded(cnn)
    step = ns.get("train_step")
    if not callable(step):
        return model, False
    data = load_dataset("digits")
    x = torch.as_tensor(data["x_train"][:, None].astype(np.float32))
    y = torch.as_tensor(data["y_train"].astype(np.int64))
    opt = torch.optim.Adam(model.parameters(), lr=DIGITS_LR)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(1)  # dropout masks
        for _ in range(DIGITS_STEPS):
            step(model, opt, x, y, torch.nn.functional.cross_entropy)
    return model, True


def figures(ex: str, ns: dict, lang: str) -> list[Any]:
    """The figures of ``figure("ex03")``, drawn from the notebook's names ``ns`` (``ex``: the exercise's
    full name, for the messages of a missing name)."""
    kw = {"lang": lang, "show": False}
    model, trained = _train_digits_torch(ns, ex, lang)
    title = None if trained else f"{figure_text('digits', lang)} ({figure_text('untrained', lang)})"
    fig = digits_report(model, title=title, trained=trained, **kw)
    say(fig, figure_text("from_ex03", lang, steps=DIGITS_STEPS, lr=DIGITS_LR) if trained else figure_text("from_ex03_untrained", lang))
    return [fig]
