"""Figures drawn from the student's own code: the notebook's entry points.

``figure("exNN")`` picks the right figure for an exercise from the notebook's
globals, trains briefly where the figure needs a trained model (with the
student's own training functions), and draws it; ``notebook_figure`` is the
notebook's ``figure``: an unfinished exercise is explained in one line, not raised.
Inside Jupyter/Colab each figure shows inline, once (returning it as a cell's
last value does not show it twice).

The parts live beside this module: the canvas, captions and PNG rendering
(:mod:`autograder.student.figure_canvas`), running the student's code and
training briefly (:mod:`autograder.student.figure_training`), and the figures
several exercises share (:mod:`autograder.student.figure_panels`:
``moons_boundary``, ``training_curves``, ``digits_report``). Only numpy,
matplotlib, torch, jax, flax and optax are used, all imported lazily. Figures
never touch pyplot's global state (they are plain ``matplotlib.figure.Figure``
objects rendered with Agg), nor the global torch RNG (``torch.random.fork_rng``).

    >>> figure("ex02")                     # in the notebook, after ex02 passes its checks
    >>> moons_boundary(torch_model=model, jax_params=params, jax_forward=mlp_forward)
"""

from __future__ import annotations

import sys
from typing import Any

from autograder.core.registry import module_name, part, resolve
from autograder.student import checked as _checked
from autograder.student import get_language
from autograder.student import stack as _stack
from autograder.student.figure_canvas import figure_text, notes, say, show_figure
from autograder.student.figure_training import _MissingNames, _one_torch_thread


class PlottingMissing(RuntimeError):
    """matplotlib is not installed: no figure can be drawn (the message says what to install, and that
    ``check()`` judges the code without it)."""


def plotting_missing(ex: str, lang: str) -> PlottingMissing | None:
    """Why ``figure(ex)`` cannot draw here (matplotlib not installed), with the command for where the student
    is; None where it is installed."""
    from autograder.core.i18n import render

    problem = _stack.plotting_missing()
    if problem is None:
        return None
    place = _stack.where()
    fix = render("stack.fix" + _stack.fix_key(place), lang, command=_stack.fix_command([problem], place))
    return PlottingMissing(figure_text("no_matplotlib", lang, ex=ex[:4], want=problem.want) + "\n" + fix)


# ----------------------------------------------------------------- one entry point
def _figures_for(ex: str, ns: dict, lang: str) -> list[Any]:
    """The figures of an exercise: its package's ``figure.figures`` (autograder/exercises/<ex>/figure.py)."""
    try:
        mod = part(ex, "figure")
    except ModuleNotFoundError as err:
        if err.name != module_name(ex, "figure"):
            raise
        raise ValueError(figure_text("no_figure", lang, ex=ex)) from None
    return mod.figures(ex, ns, lang)


def figure(exercise: str, namespace: dict | None = None, *, lang: str | None = None,
           show: bool = True) -> Any:
    """Draws the student's result for an exercise, from the notebook's globals.

    ``figure("ex02")`` trains the student's ``MLP`` with their ``train_step`` and ``evaluate``
    and draws the training curves and the decision boundary; ``figure("ex08")`` plots the
    BCE and its derivatives from their ``nth_derivative``; and so on (see ``_figures_for``).

    Args:
        exercise: ``"ex02"`` or the full exercise name.
        namespace: where to find the student's names; default: the caller's globals
            (the notebook's namespace when called from a cell).
        lang: ``"en"``/``"es"``; default: the notebook's language.
        show: display inline when running in IPython.

    Returns:
        The Figure, or a list of Figures when the exercise has several.

    Raises:
        NameError: a name the figure needs is not defined yet (message says which cells to run).
        PlottingMissing: matplotlib is not installed (the message says what to run).
    """
    lang = get_language(lang)
    ex = resolve(exercise, lang=lang)
    missing = plotting_missing(ex, lang)
    if missing is not None:
        raise missing
    if namespace is None:
        namespace = sys._getframe(1).f_globals
    with _one_torch_thread():
        figs = _figures_for(ex, dict(namespace), lang)
    failing = _checked.failing(ex)
    if failing is not None:
        for fig in figs:
            say(fig, figure_text("check_fails", lang, ex=ex[:4], failed=failing[0], n=failing[1]), warn=True)
    said: list[str] = []
    for fig in figs:
        show_figure(fig, show)
        said += [line for line in notes(fig) if line not in said]
    if show:
        for line in said:  # each sentence once, though several figures carry it
            print(line)
    return figs[0] if len(figs) == 1 else _figure_list(figs)


def notebook_figure(exercise: str, namespace: dict | None = None, *, lang: str | None = None,
                    show: bool = True) -> Any:
    """:func:`figure` as the notebook defines it: an unfinished exercise is explained, not raised.

    The notebook's figure cells run with "Run all": a stub (``NotImplementedError``), a name
    not defined yet (``NameError``) or an error in the student's code would stop every later
    cell. Here such a problem prints one line in the notebook's language instead (what to do
    next) and the call returns None.

    Args:
        exercise: ``"ex02"`` or the full exercise name.
        namespace: where to find the student's names; default: the caller's globals.
        lang: ``"en"``/``"es"``; default: the notebook's language.
        show: display inline when running in IPython.

    Returns:
        What :func:`figure` returns, or None when no figure could be drawn.
    """
    lang = get_language(lang)
    ex = resolve(exercise, lang=lang)  # a wrong name is the caller's typo: raised
    if namespace is None:
        namespace = sys._getframe(1).f_globals
    try:
        return figure(ex, namespace, lang=lang, show=show)
    except PlottingMissing as err:
        print(err)
    except NotImplementedError:
        print(figure_text("not_done", lang, ex=ex[:4]))
    except _MissingNames as err:
        print(err)
    except Exception as err:  # noqa: BLE001 - the student's code failed while drawing
        error = f"{type(err).__name__}: {err}".strip()
        print(figure_text("failed", lang, ex=ex[:4], error=error[:300]))
    return None


def _figure_list(figs: list[Any]) -> list[Any]:
    """A list of figures that displays as the figures, not as a list's text, in IPython."""

    class Figures(list):
        def _ipython_display_(self) -> None:
            for fig in self:
                fig._ipython_display_()

    return Figures(figs)


show = figure  # the notebook loader already drops cells that only call show(...)/figure(...)
