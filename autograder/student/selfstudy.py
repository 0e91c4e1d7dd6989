"""``solution("exNN")`` for self-study builds (``tapetrace build --self-study``).

This module holds no solution: it reads them from ``autograder/student/_selfstudy.json``,
a resource that only a self-study build adds to the notebook's runtime zip (made by
:func:`solutions_payload`). In the graded build the resource is absent and
``solution()`` says so; ``tests/test_i18n.py`` checks that the source tree never holds
that file.
"""

from __future__ import annotations

import json
import pkgutil
from functools import cache
from pathlib import Path

from autograder.core.i18n import get_language, render
from autograder.core.registry import resolve

RESOURCE = "_selfstudy.json"  # relative to this package


class Solution(str):
    """A solution's source: a ``str`` that renders as a Python code block in a notebook."""

    title = ""

    def __repr__(self) -> str:
        return str(self)

    def _repr_markdown_(self) -> str:
        return f"**{self.title}**\n\n```python\n{self}```\n"


@cache
def _payload() -> dict[str, dict[str, str]] | None:
    try:
        raw = pkgutil.get_data(__package__, RESOURCE)
    except OSError:
        raw = None
    return json.loads(raw) if raw else None


def solution(exercise: str, lang: str | None = None) -> str:
    """The reference solution of an exercise (self-study builds only).

    Args:
        exercise: ``"ex05"`` or the full name.
        lang: ``"en"``/``"es"`` (docstrings in that language); default: the notebook's language.

    Returns:
        The solution's source code (renders as a code block in Jupyter/Colab).

    Raises:
        LookupError: this build holds no solutions (the graded build), or none for this exercise.
    """
    lang = get_language(lang)
    full = resolve(exercise, lang=lang)
    payload = _payload()
    if payload is None:
        raise LookupError(render("solution.graded", lang, short=full[:4]))
    texts = payload.get(full)
    if not texts:
        raise LookupError(render("solution.missing", lang, exercise=full))
    out = Solution(texts.get(lang) or texts["en"])
    out.title = render("solution.title", lang, exercise=full)
    return out


def solutions_payload(solutions_dir: Path, exercises: list[str] | tuple[str, ...]) -> bytes:
    """The ``_selfstudy.json`` resource of a self-study build (build time, instructor side).

    Args:
        solutions_dir: the ``solutions/`` folder.
        exercises: which exercises to include.

    Returns:
        UTF-8 JSON ``{exercise: {"en": source, "es": source}}``: each solution without its
        ``# BEGIN/END SOLUTION`` marker lines; the Spanish one with Spanish docstrings.
    """
    from autograder.core.paths import BEGIN, END
    from autograder.student.instructions_es import localize_stub

    out = {}
    for ex in exercises:
        text = (Path(solutions_dir) / f"{ex}.py").read_text()
        clean = "".join(ln for ln in text.splitlines(keepends=True) if not (BEGIN.match(ln) or END.match(ln)))
        out[ex] = {"en": clean, "es": localize_stub(clean, ex, "es")}
    return json.dumps(out, ensure_ascii=False, sort_keys=True).encode("utf-8")
