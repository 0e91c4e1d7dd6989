"""Programs the builders write, kept as real Python files: ruff lints them, tests import or run them.

A template is a file of this folder. What a builder writes is a *part* of it: the text below a marker
line ``# ---- template ----`` (or ``# ---- template: NAME ----`` for a named part) up to the next
marker, blank lines at both ends dropped, every *slot* ``__NAME__`` (capital letters and digits
between double underscores) replaced by the text the builder gives for it. A file without a marker
is one part, the whole file. What stands above the first marker is the template's own (a docstring,
the bindings of its code slots) and is never written.

A slot inside a string literal receives the string's content (:func:`string` escapes it for a
double-quoted literal); a slot used as code (an expression) is bound above the marker, so the
template is valid Python that ruff checks as it is (E402 is off in this folder: the rendered code's
imports follow that preamble). Every slot of a part must be given, and nothing else: a typo in a
template or a builder fails the build instead of writing ``__NAME__`` to students.

The templates: ``setup_cell.py`` (the notebook's set-up cell), ``check.py`` (students' local
``check.py``), ``runtime_init.py`` (the public runtime's ``autograder/__init__.py``),
``otter_test.py`` (one otter test file per exercise), ``run_otter.py`` (the otter zip's
``run_otter.py``) and ``otter_setup.sh`` (appended to its ``setup.sh``), and ``new/`` (the skeleton of an
exercise that ``tapetrace new`` writes). None of them ships: the builders read them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
SLOT = re.compile(r"__([A-Z][A-Z0-9]*)__")
MARKER = re.compile(r"^# ---- template(?:: ([a-z0-9_]+))? ----$", re.M)
MAIN = "main"


class TemplateError(ValueError):
    """A template and its builder disagree (a slot missing, unknown, or a part that does not exist)."""


def path(name: str) -> Path:
    """The file of a template, ``name`` relative to this folder (``"check.py"``, ``"new/hints.py"``)."""
    return HERE / name


def parts(name: str) -> dict[str, str]:
    """The parts of a template, by name (``"main"`` for the unnamed one): their text, slots not filled."""
    text = path(name).read_text(encoding="utf-8")
    marks = list(MARKER.finditer(text))
    if not marks:
        return {MAIN: text.strip("\n") + "\n"}
    out: dict[str, str] = {}
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        out[m.group(1) or MAIN] = text[m.end():end].strip("\n") + "\n"
    return out


def slots(text: str) -> set[str]:
    """The slot names (``"DOC"`` for ``__DOC__``) in a text."""
    return set(SLOT.findall(text))


def render(template: str, part: str = MAIN, /, **values: str) -> str:
    """One part of a template with its slots filled.

    Args:
        template: the template's file (see :func:`path`).
        part: the part's name (``"main"``: the unnamed one).
        **values: the text of each slot, by its name in lower case (``doc="..."`` fills ``__DOC__``):
            source text, inserted as it is (a string slot's content: see :func:`string`).

    Returns:
        The rendered text (ends with one newline).

    Raises:
        TemplateError: the part does not exist, or the slots given are not exactly the part's.
    """
    table = parts(template)
    if part not in table:
        raise TemplateError(f"template {template} has no part {part!r} (it has {sorted(table)})")
    text = table[part]
    want, given = slots(text), {k.upper() for k in values}
    if want != given:
        raise TemplateError(f"template {template} ({part}): slots {sorted(want)} but the builder gave {sorted(given)}")
    return SLOT.sub(lambda m: values[m.group(1).lower()], text)


def string(text: str) -> str:
    """``text`` as the content of a double-quoted Python string literal (quotes and backslashes escaped)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]
