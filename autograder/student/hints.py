"""Tiered hints for the exercises, in English and Spanish.

Tier 1 nudges toward the concept, tier 2 narrows it down, tier 3 is a pointed
remark about the API. No tier holds solution code: ``tests/test_i18n.py``
checks that no code line of a ``# BEGIN SOLUTION`` region (that is not already
in the public stub) appears in any hint.

    >>> hint("ex05")          # tier 1, default language
    >>> hint("ex05", 2)       # tier 2
    >>> hint("ex05", 3, "es") # tier 3, in Spanish
"""

from __future__ import annotations

from autograder.core.i18n import render
from autograder.core.registry import EXERCISES, part, resolve
from autograder.student import LANGS, get_language


def _collect() -> dict[str, dict[str, list[str]]]:
    """Every exercise's ``hints.HINTS``, by language then exercise (registry order)."""
    out: dict[str, dict[str, list[str]]] = {lang: {} for lang in LANGS}
    for ex in EXERCISES:
        table = part(ex, "hints").HINTS
        for lang in LANGS:
            out[lang][ex] = list(table[lang])
    return out


# HINTS[lang][exercise]: the tiers, from autograder/exercises/<exercise>/hints.py.
HINTS: dict[str, dict[str, list[str]]] = _collect()

class Hint(str):
    """A hint: a ``str`` that renders as Markdown in Jupyter/Colab and as plain text elsewhere."""

    def __repr__(self) -> str:
        return str(self)

    def _repr_markdown_(self) -> str:
        head, _, body = str(self).partition("\n")
        return f"**{head}**\n\n{body}" if body else head


def hint(exercise: str, tier: int = 1, lang: str | None = None) -> str:
    """One hint for an exercise.

    Args:
        exercise: ``"ex05"`` or the full name ``"ex05_jit_train_step"``.
        tier: 1 (a nudge toward the concept) to 3 (a pointed remark about the API).
        lang: ``"en"`` or ``"es"``; default: the language set with ``set_language``
            (English unless the notebook set it).

    Returns:
        The hint as a string (displays as Markdown in a notebook); for a tier the exercise does not
        have, a line saying which tiers it has (a notebook cell shows it, no traceback).

    Raises:
        ValueError: unknown exercise or language.
    """
    lang = get_language(lang)
    full = resolve(exercise, lang=lang)
    tiers = HINTS[lang][full]
    if not isinstance(tier, int) or isinstance(tier, bool) or not 1 <= tier <= len(tiers):
        return Hint(render("hint.bad_tier", lang, tier=tier, exercise=full, short=full[:4], n=len(tiers)))
    head = render("hint.label", lang, tier=tier, n=len(tiers), exercise=full)
    return Hint(f"{head}\n{tiers[tier - 1]}")
