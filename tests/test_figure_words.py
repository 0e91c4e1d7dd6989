"""A figure says in words what it cannot show (a loss that turned nan or grew, outputs that are nan, a
model that learnt nothing) and whose model it trains; ``figure()`` prints the same sentences."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from autograder.core.paths import SOLUTIONS
from autograder.student import figure_canvas, figure_panels, figures


def _warnings(fig) -> list[str]:
    return [n for n in figure_canvas.notes(fig) if n.startswith("⚠")]


@pytest.mark.parametrize(("lang", "words"), [("en", "from step 107 on"), ("es", "desde el paso 107")])
def test_a_loss_that_turns_nan_is_said(lang, words):
    losses = list(np.exp(-np.linspace(0, 2, 300)))
    losses[106:] = [float("nan")] * (300 - 106)
    fig = figure_panels.training_curves(losses, unit="step", lang=lang, show=False)
    (note,) = _warnings(fig)
    assert words in note and "nan" in note
    assert note.lstrip("⚠ ") in fig.get_supxlabel().replace("\n", " ")  # on the figure itself


def test_a_growing_training_loss_is_said_and_a_falling_one_is_not():
    falling = list(np.exp(-np.linspace(0, 3, 50)) + 0.05)
    assert not _warnings(figure_panels.training_curves(falling, falling[::-1], show=False))  # val may rise
    (note,) = _warnings(figure_panels.training_curves(falling[::-1], show=False))
    assert "diverged" in note


def test_nan_outputs_draw_no_boundary_but_say_so():
    torch = pytest.importorskip("torch")

    class Broken(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(1))

        def forward(self, x):
            return x[:, :1] * float("nan")

    fig = figure_panels.moons_boundary(torch_model=Broken(), trained=True, show=False)
    assert any("nan" in n for n in _warnings(fig)), figure_canvas.notes(fig)


def test_a_trained_model_at_chance_is_said():
    torch = pytest.importorskip("torch")
    flat = torch.nn.Linear(2, 1)
    with torch.no_grad():
        flat.weight.zero_()
        flat.bias.fill_(1.0)  # always class 1: chance on make_moons
    assert any("chance" in n for n in _warnings(figure_panels.moons_boundary(torch_model=flat, trained=True, show=False)))
    assert not _warnings(figure_panels.moons_boundary(torch_model=flat, show=False))  # untrained: expected


def _solution(ex: str) -> dict:
    spec = importlib.util.spec_from_file_location(f"_words_{ex}", SOLUTIONS / f"{ex}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return {k: v for k, v in vars(mod).items() if not k.startswith("__")}


def test_ex05_figure_says_when_the_students_step_diverges(capsys):
    """ex05's loss turned nan at step 107 and the plot just stopped: now the figure, and the notebook's
    output, say so."""
    pytest.importorskip("jax")
    import jax
    import jax.numpy as jnp

    ns = _solution("ex04_jax_mlp")

    def naive_bce(params, x, y):  # a loss that is not numerically stable
        p = jax.nn.sigmoid(ns["mlp_forward"](params, x)[:, 0])
        return -jnp.mean(y * jnp.log(p) + (1 - y) * jnp.log(1 - p))

    def make_train_step(loss_fn, optimizer):  # ignores the optimizer: plain SGD with a huge rate
        @jax.jit
        def step(params, opt_state, x, y):
            loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
            return jax.tree_util.tree_map(lambda p, g: p - 200.0 * g, params, grads), opt_state, loss
        return step

    ns.update(bce_loss=naive_bce, make_train_step=make_train_step)
    figs = figures.figure("ex05", ns, show=True)
    warned = [n for fig in figs for n in _warnings(fig)]
    assert warned and all(("nan" in n or "diverged" in n or "chance" in n) for n in warned), warned
    printed = capsys.readouterr().out
    assert warned[0] in printed


@pytest.mark.parametrize("lang", ["en", "es"])
def test_ex02_figure_prints_each_sentence_once_and_says_its_check_fails(capsys, monkeypatch, lang):
    """figure("ex02") draws two figures that carry the same caption: printed once, not twice; drawn while
    ex02's latest check failed, every figure and the output say so (issue 37)."""
    from autograder.student import checked

    ns = {**_solution("ex01_torch_mlp"), **_solution("ex02_torch_training")}
    monkeypatch.setattr(checked, "LAST", {})
    checked.record("ex02_torch_training", 2, 4)
    figs = figures.figure("ex02", ns, lang=lang, show=True)
    printed = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert len(printed) == len(set(printed)) and len(figs) >= 2, printed
    words = {"en": "ex02's check does not pass yet (2 of 4", "es": "la comprobación de ex02 todavía no pasa (fallan 2 de 4"}
    assert sum(words[lang] in line for line in printed) == 1, printed
    assert all(any(words[lang] in n for n in figure_canvas.notes(fig)) for fig in figs)
