"""The student-facing layer: language, hints and figures for the notebook.

The exercise-specific parts live in each exercise's package (``autograder/exercises/<ex>/``:
``hints.py``, ``figure.py``, ``es.py``); the modules here collect them and hold what they share.

Everything here ships to students (notebook / Colab), so nothing here may hold
solution code. Heavy imports (numpy, matplotlib, torch, jax) happen lazily,
inside the functions that need them.

    >>> from autograder.student import hint, figure, set_language
    >>> set_language("es")          # the Spanish build's set-up cell does this
    >>> hint("ex05")                # tier 1: a nudge toward the concept
    >>> hint("ex05", 3)             # tier 3: a pointed remark about the API
    >>> figure("ex02")              # draws the student's result from their globals
    >>> solution("ex02")            # self-study builds only (the graded build has no solutions)
"""

from __future__ import annotations

from typing import Any

from autograder.core.i18n import LANGS as LANGS
from autograder.core.i18n import get_language as get_language
from autograder.core.i18n import set_language as set_language


def __getattr__(name: str) -> Any:
    # Lazy re-exports: `from autograder.student import figure` must not import matplotlib
    # until a figure is drawn.
    if name in ("hint", "HINTS"):
        from autograder.student import hints

        return getattr(hints, name)
    if name in ("figure", "notebook_figure", "show"):
        from autograder.student import figures

        return getattr(figures, name)
    if name in ("moons_boundary", "training_curves", "digits_report"):
        from autograder.student import figure_panels

        return getattr(figure_panels, name)
    if name in ("solution", "solutions_payload"):
        from autograder.student import selfstudy

        return getattr(selfstudy, name)
    if name in ("INSTRUCTIONS_ES", "NOTEBOOK_TEXT", "DOCSTRINGS_ES", "instructions", "localize_stub"):
        from autograder.student import instructions_es

        return getattr(instructions_es, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["LANGS", "get_language", "set_language"]
