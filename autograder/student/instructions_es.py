"""Spanish student instructions, and the notebook's fixed texts in both languages.

The translations live in each exercise's package, ``autograder/exercises/<exercise>/es.py``: its
module docstring is the Spanish version of ``solutions/<exercise>.py``'s module docstring (the
student's instructions), ``DOCSTRINGS`` the Spanish docstrings of the stub, ``SOURCE_SHA`` the
fingerprint of the English they follow. Collected here:

- ``INSTRUCTIONS_ES[exercise]``: the Spanish instructions, same layout, with code
  identifiers, shapes and the ``>>>`` example unchanged.
- ``DOCSTRINGS_ES[exercise][qualname]``: the Spanish version of each function /
  class docstring of the stub (``"MLP"``, ``"MLP.forward"``, ...), without
  indentation (``localize_stub`` indents them).
- ``localize_stub(source, exercise, lang)``: a stub's source with every docstring
  and the ``# YOUR CODE HERE`` marker in ``lang``; code unchanged.
- ``instructions(exercise, lang)``: the instructions text in either language.
- ``NOTEBOOK_TEXT[lang][key]``: the notebook's fixed texts (catalogued in ``autograder/messages/notebook.py``).
- ``SOURCE_SHA[exercise]``: fingerprint of the English docstrings these
  translations follow; ``tests/test_i18n.py`` fails when the English text
  changes, so the Spanish cannot silently fall behind
  (``python -m autograder.student.instructions_es`` prints the current ones).

Terminology follows ``docs/glossary.md``.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

from autograder.core.i18n import section
from autograder.core.registry import EXERCISES, part


def _collect() -> tuple[dict[str, str], dict[str, dict[str, str]], dict[str, str]]:
    """Every exercise's ``es.py``: its module docstring, its ``DOCSTRINGS`` and its ``SOURCE_SHA``."""
    instructions_es, docstrings_es, source_sha = {}, {}, {}
    for ex in EXERCISES:
        mod = part(ex, "es")
        instructions_es[ex], docstrings_es[ex], source_sha[ex] = mod.__doc__, dict(mod.DOCSTRINGS), mod.SOURCE_SHA
    return instructions_es, docstrings_es, source_sha


INSTRUCTIONS_ES, DOCSTRINGS_ES, SOURCE_SHA = _collect()

# The stub markers and the notebook's fixed texts, by language (UI text: autograder/messages/notebook.py).
STUB_MARKERS: dict[str, dict[str, str]] = section("stub")
NOTEBOOK_TEXT: dict[str, dict[str, str]] = section("notebook")


# ----------------------------------------------------------------- English sources
def _solutions_dir() -> Path:
    from autograder.core.paths import SOLUTIONS

    return SOLUTIONS


def _docstring_nodes(tree: ast.Module) -> list[tuple[str, ast.Expr]]:
    """``(qualname, docstring Expr node)`` for the module ("") and every def/class, in source order."""
    out: list[tuple[str, ast.Expr]] = []

    def first_doc(body: list[ast.stmt]) -> ast.Expr | None:
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            return body[0]
        return None

    doc = first_doc(tree.body)
    if doc is not None:
        out.append(("", doc))

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                d = first_doc(node.body)
                if d is not None:
                    out.append((prefix + node.name, d))
                if isinstance(node, ast.ClassDef):
                    walk(node.body, prefix + node.name + ".")

    walk(tree.body, "")
    return out


def english_docstrings(source: str) -> dict[str, str]:
    """``{qualname: docstring}`` of a module's source (``""`` is the module docstring), uncleaned."""
    return {name: node.value.value for name, node in _docstring_nodes(ast.parse(source))}


def english_sha(source: str) -> str:
    """Fingerprint of all docstrings of a solution module (what the Spanish must follow)."""
    docs = english_docstrings(source)
    blob = "\x00".join(f"{k}\x01{v}" for k, v in sorted(docs.items()))
    return hashlib.sha1(blob.encode()).hexdigest()[:12]


def instructions(exercise: str, lang: str = "en") -> str:
    """The student's instructions (the module docstring) of an exercise in ``lang``."""
    if lang == "es":
        return INSTRUCTIONS_ES[exercise]
    source = (_solutions_dir() / f"{exercise}.py").read_text()
    return english_docstrings(source)[""]


# ----------------------------------------------------------------- localised stubs
def _literal(text: str, indent: str) -> str:
    """A triple-quoted docstring literal, continuation lines indented by ``indent``."""
    lines = text.strip("\n").split("\n")
    body = "\n".join([lines[0]] + [(indent + ln) if ln.strip() else "" for ln in lines[1:]])
    closing = f"\n{indent}" if len(lines) > 1 else ""
    quote = '"""' if '"""' not in text else "'''"
    prefix = "r" if "\\" in text else ""
    return f"{prefix}{quote}{body}{closing}{quote}"


def localize_stub(source: str, exercise: str, lang: str = "es") -> str:
    """A stub's (or solution's) source with its docstrings and stub markers in ``lang``.

    Code is untouched: only the module docstring (-> ``INSTRUCTIONS_ES``), each def/class
    docstring (-> ``DOCSTRINGS_ES``), the ``# YOUR CODE HERE`` comment and the
    ``NotImplementedError`` message change. ``lang="en"`` returns ``source`` unchanged.

    Raises:
        KeyError: a docstring of the source has no Spanish translation.
    """
    if lang == "en":
        return source
    if lang != "es":
        raise ValueError(f"unknown language {lang!r}")
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    for name, node in reversed(_docstring_nodes(tree)):
        text = INSTRUCTIONS_ES[exercise] if name == "" else DOCSTRINGS_ES[exercise][name]
        start, end = node.lineno - 1, node.end_lineno
        first = lines[start]
        indent = first[: len(first) - len(first.lstrip())]
        tail = lines[end - 1][node.end_col_offset:]
        lines[start:end] = [indent + _literal(text, indent) + tail]
    out = "".join(lines)
    en, es = STUB_MARKERS["en"], STUB_MARKERS[lang]
    return out.replace(en["code_here"], es["code_here"]).replace(en["replace"], es["replace"])


if __name__ == "__main__":  # prints the fingerprints to paste into each es.py's SOURCE_SHA after re-translating
    for _ex in EXERCISES:
        _p = _solutions_dir() / f"{_ex}.py"
        if _p.exists():
            print(f'autograder/exercises/{_ex}/es.py: SOURCE_SHA = "{english_sha(_p.read_text())}"')
