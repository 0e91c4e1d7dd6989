"""Message catalogues: the engine's (``common``) and each exercise's ``messages.py``, each with ``EN`` and
``ES`` dicts sharing keys.

Messages are constants that show the bug and the fix. Checks raise
``Fail(KEY, **fields)``; the engine renders the key in the grading language.
"""

from __future__ import annotations

import importlib
import pkgutil
import string
from functools import cache

LANGS = ("en", "es")


def catalogue_modules() -> list[str]:
    """Import names of the catalogue modules: this package's topics, then each exercise's ``messages``."""
    from autograder import exercises

    names = [f"{__name__}.{info.name}" for info in pkgutil.iter_modules(__path__)]
    return names + [f"{exercises.__name__}.{ex}.messages" for ex in exercises.package_names()]


@cache
def catalogue(lang: str = "en") -> dict[str, str]:
    """All message templates for a language, merged across topic modules.

    Args:
        lang: ``"en"`` or ``"es"``.

    Returns:
        A dict ``key -> template`` (``str.format`` placeholders).
    """
    out: dict[str, str] = {}
    for name in catalogue_modules():
        mod = importlib.import_module(name)
        table = getattr(mod, lang.upper(), None) or {}
        dup = set(out) & set(table)
        if dup:
            raise RuntimeError(f"message keys defined twice: {sorted(dup)}")
        out.update(table)
    return out


def placeholders(template: str) -> set[str]:
    """Names of the ``{field}`` placeholders in a template."""
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def render(key: str, lang: str = "en", **fields: object) -> str:
    """Renders a message key; falls back to English, then to the key itself."""
    template = catalogue(lang).get(key) or catalogue("en").get(key)
    if template is None:
        return key
    if lang != "en" and isinstance(fields.get("detail"), str):
        from autograder._compare import localize_detail  # its comparison sentences, in this language

        fields["detail"] = localize_detail(fields["detail"], lang)
    try:
        return template.format(**fields)
    except (KeyError, IndexError, ValueError):
        return template
