"""The one place that knows the languages: ``LANGS``, the current language, and one catalogue.

The catalogue merges, per language, every text a student or an instructor reads:

- the engine's messages (``autograder/messages/common.py``) and each exercise's
  (``autograder/exercises/<exercise>/messages.py``): keys in ``UPPER_SNAKE``, raised by checks as
  ``Fail(KEY, **fields)``;
- UI text (``autograder/messages/notebook.py``, ``student.py``, ``report.py``): dotted keys
  (``"public.passed"``, ``"figure.not_done"``, ``"notebook.intro_md"``, ...).

Each module has ``EN`` and ``ES`` dicts with the same keys and the same ``str.format``
placeholders (``tests/test_i18n.py`` checks them all). Ships to students (the notebook's runtime).

    >>> render("public.passed", "es", n=3)
    'SUPERADO: pasan las 3 comprobaciones públicas.'
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import string
from functools import cache

LANGS = ("en", "es")
ENV = "TAPETRACE_LANG"
_STATE: dict[str, str | None] = {"lang": None}


def _valid(lang: str) -> str:
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}: expected one of {LANGS}")
    return lang


def set_language(lang: str) -> None:
    """Sets the current language (of checks, hints, figures and solutions): ``"en"`` or ``"es"``."""
    _STATE["lang"] = _valid(lang)


def get_language(lang: str | None = None) -> str:
    """``lang`` if given (validated); else the current one: :func:`set_language`'s, else the
    ``TAPETRACE_LANG`` environment variable's, else English."""
    if lang is not None:
        return _valid(lang)
    lang = _STATE["lang"] or os.environ.get(ENV, "en")
    return lang if lang in LANGS else "en"


def catalogue_modules() -> list[str]:
    """Import names of the catalogue's modules: ``autograder/messages/*.py``, then each exercise's ``messages``."""
    from autograder import messages  # plain data, below the core: it imports nothing of the engine
    from autograder.core.exercise import module_name, package_names  # the exercises' by name (they sit above)

    names = [f"{messages.__name__}.{info.name}" for info in pkgutil.iter_modules(messages.__path__)]
    return names + [module_name(ex, "messages") for ex in package_names()]


def _catalogue_tables(lang: str) -> list[dict[str, str]]:
    """Each catalogue module's table of ``lang``, in :func:`catalogue_modules`' order (the exercises' through
    :func:`autograder.core.exercise.part`, the one by-name import of an exercise's part)."""
    from autograder import messages
    from autograder.core.exercise import package_names, part

    mods = [importlib.import_module(f"{messages.__name__}.{info.name}") for info in pkgutil.iter_modules(messages.__path__)]
    mods += [part(ex, "messages") for ex in package_names()]
    return [getattr(mod, lang.upper(), None) or {} for mod in mods]


@cache
def catalogue(lang: str = "en") -> dict[str, str]:
    """All templates of a language, merged across the catalogue's modules.

    Args:
        lang: ``"en"`` or ``"es"``.

    Returns:
        A dict ``key -> template`` (``str.format`` placeholders).

    Raises:
        RuntimeError: a key is defined by two modules.
    """
    out: dict[str, str] = {}
    for table in _catalogue_tables(lang):
        dup = set(out) & set(table)
        if dup:
            raise RuntimeError(f"message keys defined twice: {sorted(dup)}")
        out.update(table)
    return out


def section(prefix: str) -> dict[str, dict[str, str]]:
    """The UI texts under ``prefix.`` in every language, without the prefix: ``{lang: {key: template}}``."""
    head = prefix + "."
    return {lang: {k[len(head):]: v for k, v in catalogue(lang).items() if k.startswith(head)} for lang in LANGS}


def placeholders(template: str) -> set[str]:
    """Names of the ``{field}`` placeholders in a template."""
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def label(key: str, **fields: object) -> dict[str, object]:
    """A catalogued text used as a field of a message (a check's ``what=``, a probe's ``expected=``):
    plain data that :func:`render` renders in the message's language, so no English label ends up in a
    Spanish message.

        >>> render("MISMATCH", "es", what=label("ex05.what.params_sgd"), detail="...")
    """
    return {"key": key, **fields}


def render(key: str, lang: str = "en", _depth: int = 0, **fields: object) -> str:
    """Renders a key in ``lang``; falls back to English, then to the key itself.

    A template whose fields are missing or malformed comes back unformatted rather than raising. A
    field that is itself a catalogued text, ``{"key": KEY, **its_fields}`` (:func:`label`; what a
    worker sends, as plain data, for "at line N of your code"), is rendered first, in the same
    language (its own label fields too, a few levels deep); where the template puts that field in a
    code span (`` `{call}` ``), the label's text replaces the span (it marks its own code).
    """
    template = catalogue(lang).get(key) or catalogue("en").get(key)
    if template is None:
        return key
    for name, value in list(fields.items()):
        if isinstance(value, dict) and isinstance(value.get("key"), str):
            inner = {k: v for k, v in value.items() if k != "key" and (_depth < 3 or not isinstance(v, dict))}
            fields[name] = render(value["key"], lang, _depth + 1, **inner)
            # a label where the template shows code (`{call}`) stands for the whole code span: its own
            # text marks its code ("`step(x, y)` with `torch.optim.AdamW(...)`"), never prose in backticks
            template = template.replace(f"`{{{name}}}`", f"{{{name}}}")
    detail = fields.get("detail")
    if lang != "en" and isinstance(detail, str):
        from autograder.core.compare import localize_detail  # its comparison sentences, in this language

        fields["detail"] = localize_detail(detail, lang)
    try:
        return template.format(**fields)
    except (KeyError, IndexError, ValueError):
        return template
