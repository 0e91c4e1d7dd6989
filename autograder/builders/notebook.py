"""The student notebook: rendering it from the exercises, and filling it with code (tests, benchmarks).

Cells carry ``{"tapetrace": {"exercise": EX, "role": ROLE}}`` metadata (roles:
``setup``, ``markdown``, ``answer``, ``check``, ``figure``), which is how
:func:`autograder.submissions.loader.notebook_sources` groups a submission's code per
exercise (check and figure cells are never graded). Answer, check and figure
cells are also marked ``{"otter": {"ignore": true}}``: otter-grader does not
execute them in its kernel, because the tapetrace engine grades the code read
from the notebook file in its own sandboxed workers.

Per exercise: its instructions (markdown: :mod:`autograder.builders.instructions`), its code cell (the stub), a check cell
(``check("exNN_...")``), a markdown cell on hints and figures (and the solution in a
self-study build) and a figure cell (``figure("exNN")``).

Two languages (``lang="en"`` / ``"es"``): every text comes from
``autograder.student.instructions_es.NOTEBOOK_TEXT`` (the English intro and outro
are :data:`INTRO` and :data:`OUTRO`), the instructions and stubs are passed in
already localized, and the set-up cell sets the language of checks, hints and
figures.

The set-up cell is self-contained: it carries the public runtime (a zip of the
public checks, probes, messages, the student package and the reference snapshot)
as base64 and writes it to one file, ``tapetrace_checks.zip``, next to the
notebook; then it defines ``check``, ``hint`` and ``figure`` (and ``solution`` in
a self-study build).
"""

from __future__ import annotations

import ast
import base64
import copy
import hashlib
import json
import re
from typing import Any

from autograder.builders import templates
from autograder.builders.instructions import instructions
from autograder.core.i18n import LANGS, render
from autograder.student.instructions_es import NOTEBOOK_TEXT

NOTEBOOK = "tapetrace.ipynb"
RUNTIME_FILE = "tapetrace_checks.zip"
META = "tapetrace"
FORMAT = 1
_SETUP_CALL = re.compile(r'_tapetrace_setup\("([0-9a-f]{64})", "([A-Za-z0-9+/=]*)"\)')

# The set-up cell: its comment lines (language-specific: UI text "setup.comments") + the code of
# autograder/builders/templates/setup_cell.py (the same in every build).
SETUP_TEMPLATE = "setup_cell.py"
# What the set-up cell defines in the notebook, and where each comes from inside _tapetrace_setup.
HELPERS = (("check", "_public.check"), ("hint", "hints.hint"), ("figure", "figures.notebook_figure"))
SELF_STUDY_HELPERS = (("solution", "student.solution"),)

INTRO = """\
# tapetrace — the tape vs the trace: PyTorch and JAX, exercise by exercise

The exercises build the same models twice: in PyTorch, where autograd records a *tape*
while your code runs, and in JAX, where `jax.jit` *traces* your function once and compiles it.

**How to work**
1. Run the set-up cell below first (it installs nothing; torch, jax, flax and optax come with Colab).
2. For each exercise: read the instructions, replace each `raise NotImplementedError(...)` in its code
   cell with your code, run the cell, then run its check cell: `check("exNN")`.
3. A check says one of three things: **NOT ATTEMPTED** (the stub is still there), **INCORRECT** (with what
   is wrong: a shape, a max error, a property — never the expected values) or **PASSED**.
   The public checks cover part of each exercise's points; hidden tests grade more when you submit.

**Rules that keep grading fair to you**
- Keep the names and signatures of the stubs. Helpers of your own are fine (start their names with `_`).
- An exercise's code is every code cell from its heading to the next exercise's heading (cells you add count).
  It is graded as *Run all* runs it: it may use what the cells above define (imports, functions, classes,
  variables; their loops and bare expressions are not re-run for it), and an error elsewhere costs it nothing.
  Its own top-level code runs when it is graded: keep long training runs inside functions.
- Do not edit or delete the set-up cell. Checks use your runtime's device: torch on a GPU when there is one,
  JAX on its default backend (GPU or TPU).

**Submit** the notebook file itself (Colab: File → Download → Download .ipynb).
"""

OUTRO = """\
## Submit

Save the notebook and hand in the `.ipynb` file (Colab: File → Download → Download .ipynb).
Hidden tests then grade every exercise on fresh inputs, each in its own sandboxed process with a time limit,
so one exercise that crashes or never finishes costs only that exercise's points.
"""


def _cell(kind: str, source: str, cell_id: str, exercise: str | None, role: str,
          extra: dict[str, Any] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {META: {"role": role} if exercise is None else {"exercise": exercise, "role": role}}
    meta.update(extra or {})
    cell: dict[str, Any] = {"cell_type": kind, "id": cell_id, "metadata": meta, "source": source}
    if kind == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    return cell


def code_cell_source(stub: str) -> str:
    """A stub module's code without its generated header line and its module docstring."""
    lines = stub.splitlines()
    if lines and lines[0].startswith("# Generated from solutions/"):
        lines = lines[1:]
    text = "\n".join(lines) + "\n"
    tree = ast.parse(text)
    if tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(getattr(tree.body[0], "value", None),
                                                                        ast.Constant) \
            and isinstance(tree.body[0].value.value, str):
        end = tree.body[0].end_lineno or 0
        text = "\n".join(text.splitlines()[end:]) + "\n"
    return text.strip("\n") + "\n"


def setup_source(runtime: bytes, lang: str = "en", self_study: bool = False) -> str:
    """The set-up cell's code carrying ``runtime`` (the public runtime zip).

    It sets the language of checks, hints and figures and defines ``check``, ``hint`` and
    ``figure`` (and ``solution`` in a self-study build) in the notebook.
    """
    helpers = HELPERS + (SELF_STUDY_HELPERS if self_study else ())
    comments = render("setup.comments", lang, title=NOTEBOOK_TEXT[lang]["setup_comment"], runtime_file=RUNTIME_FILE)
    code = templates.render(SETUP_TEMPLATE, runtimefile=templates.string(RUNTIME_FILE),
                            sha256=hashlib.sha256(runtime).hexdigest(), data=base64.b64encode(runtime).decode("ascii"),
                            lang=templates.string(lang), damaged=templates.string(render("setup.damaged", lang)),
                            helpers=", ".join(src for _, src in helpers), names=", ".join(name for name, _ in helpers))
    return comments + code


def help_markdown(exercise: str, lang: str = "en", self_study: bool = False) -> str:
    """The markdown cell after an exercise's check: hints, its figure (and its solution when self-study)."""
    text = NOTEBOOK_TEXT[lang]
    short = exercise[:4]
    parts = []
    for key in ("hints", "figure") + (("solution",) if self_study else ()):
        title = text[f"{key}_title"]
        title = title if title[-1:] in "?.!:" else title + "."
        parts.append(f"**{title}** {text[key].format(short=short)}")
    return "\n\n".join(parts) + "\n"


def build(exercises: list[dict[str, Any]], runtime: bytes, meta: dict[str, Any], lang: str = "en",
          self_study: bool = False) -> dict[str, Any]:
    """The student notebook.

    Args:
        exercises: in order, dicts with ``name``, ``doc`` (docstring, in ``lang``), ``code`` (stub code,
            localized), ``public_points`` and ``total_points``.
        runtime: the public runtime zip (see :mod:`autograder.builders.runtime`).
        meta: extra notebook-level ``tapetrace`` metadata (digest, exercises).
        lang: ``"en"`` or ``"es"``: every text of the notebook, and the language the set-up cell sets.
        self_study: the self-study edition (``solution`` defined, a paragraph on it per exercise).

    Returns:
        An nbformat 4.5 notebook (plain dict).
    """
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}: expected one of {LANGS}")
    text = NOTEBOOK_TEXT[lang]
    ignore = {"otter": {"ignore": True}}
    intro = text["intro_md"].rstrip("\n") + "\n\n" + text["intro_help_md"]
    if self_study:
        intro = intro.rstrip("\n") + "\n\n" + text["intro_selfstudy_md"]
    cells = [_cell("markdown", intro, "intro", None, "markdown"),
             _cell("code", setup_source(runtime, lang, self_study), "setup", None, "setup",
                   {"cellView": "form", "jupyter": {"source_hidden": True}})]
    for ex in exercises:
        name = ex["name"]
        cells.append(_cell("markdown", instructions(ex["doc"], name, ex["public_points"], ex["total_points"], lang),
                           f"{name}-text", name, "markdown"))
        cells.append(_cell("code", ex["code"], f"{name}-code", name, "answer", ignore))
        cells.append(_cell("code", f'check("{name}")\n', f"{name}-check", name, "check", ignore))
        cells.append(_cell("markdown", help_markdown(name, lang, self_study), f"{name}-help", name, "markdown"))
        cells.append(_cell("code", f'figure("{name[:4]}")\n', f"{name}-figure", name, "figure", ignore))
    cells.append(_cell("markdown", text["outro_md"], "submit", None, "markdown"))
    for cell in cells:
        cell["source"] = cell["source"].splitlines(keepends=True)
    tapetrace_meta = {"format": FORMAT, "lang": lang, **meta}
    if self_study:
        tapetrace_meta["self_study"] = True
    return {
        "cells": cells,
        "metadata": {
            "colab": {"provenance": [], "toc_visible": True},
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            META: tapetrace_meta,
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def dumps(nb: dict[str, Any]) -> str:
    """Serialises like Jupyter does (one-space indent, UTF-8, trailing newline)."""
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def source_of(cell: dict[str, Any]) -> str:
    """A cell's source as one string."""
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def role_of(cell: dict[str, Any]) -> tuple[str | None, str | None]:
    """``(exercise, role)`` from a cell's tapetrace metadata."""
    meta = (cell.get("metadata") or {}).get(META) or {}
    return meta.get("exercise"), meta.get("role")


def fill_with(nb: dict[str, Any], sources: dict[str, str]) -> dict[str, Any]:
    """A copy of ``nb`` whose answer cells hold the given code.

    Args:
        nb: a notebook made by :func:`build` (or a student's copy of it).
        sources: ``{exercise: module source}``; an exercise's first answer cell gets the source,
            its other answer cells are emptied; exercises not named are left as they are.

    Returns:
        The new notebook (``nb`` is not modified).

    Raises:
        KeyError: an exercise named in ``sources`` has no answer cell.
    """
    out = copy.deepcopy(nb)
    done: set[str] = set()
    for cell in out["cells"]:
        ex, role = role_of(cell)
        if role == "answer" and ex in sources:
            cell["source"] = (sources[ex] if ex not in done else "").splitlines(keepends=True)
            cell["outputs"], cell["execution_count"] = [], None
            done.add(ex)
    missing = set(sources) - done
    if missing:
        raise KeyError(f"no answer cell for {sorted(missing)}")
    return out


def setup_cell(nb: dict[str, Any]) -> dict[str, Any]:
    """The set-up cell of a notebook made by :func:`build`."""
    for cell in nb.get("cells", []):
        if role_of(cell)[1] == "setup":
            return cell
    raise ValueError("the notebook has no tapetrace set-up cell")


def runtime_of(nb: dict[str, Any]) -> bytes:
    """The public runtime zip carried by the set-up cell (checked against its sha256)."""
    m = _SETUP_CALL.search(source_of(setup_cell(nb)))
    if not m:
        raise ValueError("the set-up cell carries no runtime")
    blob = base64.b64decode(m.group(2))
    if hashlib.sha256(blob).hexdigest() != m.group(1):
        raise ValueError("the set-up cell's runtime does not match its sha256")
    return blob


def without_runtime(nb: dict[str, Any]) -> dict[str, Any]:
    """A copy with the runtime blob replaced by a placeholder (to compare notebooks structurally)."""
    out = copy.deepcopy(nb)
    cell = setup_cell(out)
    text = _SETUP_CALL.sub('_tapetrace_setup("<sha256>", "<runtime>")', source_of(cell))
    cell["source"] = text.splitlines(keepends=True)
    return out
