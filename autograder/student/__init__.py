"""The student-facing layer: language, hints and figures for the notebook.

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

import os
import sys
from typing import Any

LANGS = ("en", "es")
_STATE: dict[str, str | None] = {"lang": None}


def set_language(lang: str) -> None:
    """Sets the default language of hints, figure labels and solutions (``"en"`` or ``"es"``)."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}: expected one of {LANGS}")
    _STATE["lang"] = lang


def get_language(lang: str | None = None) -> str:
    """``lang`` if given (validated); else the default, in this order: :func:`set_language`,
    the public checks' language (``autograder._public.set_language``, when loaded), the
    ``TAPETRACE_LANG`` environment variable, English."""
    if lang is None:
        lang = _STATE["lang"]
        if lang is None:
            public = sys.modules.get("autograder._public")
            lang = (getattr(public, "LANG", None) or {}).get("value") if public is not None else None
        if lang not in LANGS:
            lang = os.environ.get("TAPETRACE_LANG", "en")
        return lang if lang in LANGS else "en"
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}: expected one of {LANGS}")
    return lang


def __getattr__(name: str) -> Any:
    # Lazy re-exports: `from autograder.student import figure` must not import matplotlib
    # until a figure is drawn.
    if name in ("hint", "HINTS", "resolve_exercise"):
        from autograder.student import hints

        return getattr(hints, name)
    if name in ("figure", "notebook_figure", "show", "moons_boundary", "training_curves", "digits_report",
                "bridge_overlay", "bce_derivatives", "grad_norms", "tape_graph"):
        from autograder.student import figures

        return getattr(figures, name)
    if name in ("solution", "solutions_payload"):
        from autograder.student import selfstudy

        return getattr(selfstudy, name)
    if name in ("INSTRUCTIONS_ES", "NOTEBOOK_TEXT", "DOCSTRINGS_ES", "instructions", "localize_stub"):
        from autograder.student import instructions_es

        return getattr(instructions_es, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["LANGS", "get_language", "set_language"]
