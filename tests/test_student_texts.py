"""What students read says what it means: the check report's words, the hints' tiers, and texts that
name only what students have (no "seed" document, no answer in a message or a hint)."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

from autograder.builders import public as _public
from autograder.student import hints

# the module (the package maps the name `instructions` to its function too: which one `from ... import` gets
# depends on what ran first)
_instructions = importlib.import_module("autograder.builders.instructions")

sys.path.insert(0, str(Path(__file__).parent))
from test_i18n import english_texts, spanish_texts  # noqa: E402


def _result(passed: list[bool], code: str = "MISMATCH", message: str = "output: 3 of 8 values off") -> _public.CheckResult:
    tests = [{"name": f"check_{i}", "points": 2.5, "passed": ok, "code": "" if ok else code,
              "message": "" if ok else message} for i, ok in enumerate(passed)]
    return _public.CheckResult("ex01_torch_mlp", _public._status(tests), tests, 5.0, 10.0,
                               {"torch": "cpu", "jax": "cpu"})


@pytest.mark.parametrize(("lang", "one", "two"), [
    ("en", "INCORRECT: 1 of 2 public checks fails.", "INCORRECT: 2 of 3 public checks fail."),
    ("es", "INCORRECTO: falla 1 de las 2 comprobaciones públicas.", "INCORRECTO: fallan 2 de 3 comprobaciones públicas."),
])
def test_the_failed_count_agrees_with_its_verb(lang, one, two):
    assert one in _public._report(_result([True, False]), lang)
    assert two in _public._report(_result([False, True, False]), lang)


@pytest.mark.parametrize("lang", ["en", "es"])
def test_not_attempted_is_said_once(lang):
    from autograder.core.i18n import render

    msg = render("NOT_ATTEMPTED", lang, where="MLP.forward")
    report = _public._report(_result([False, False], "NOT_ATTEMPTED", msg), lang)
    line = next(ln for ln in report.splitlines() if "MLP.forward" in ln)
    label = render("notebook.not_attempted", lang).lower()
    assert line.lower().count(label) == 1, line
    assert "`MLP.forward`" in line


@pytest.mark.parametrize(("lang", "want"), [
    ("en", '*10 points: the public checks, which `check("ex01")` runs, are worth 5 of them; hidden tests grade '
           'the rest when you submit.*'),
    ("es", '*10 puntos: las comprobaciones públicas, que ejecuta `check("ex01")`, valen 5; al entregar, las '
           'pruebas ocultas corrigen el resto.*'),
])
def test_the_points_line_counts_points(lang, want):
    md = _instructions.instructions("Exercise 01 — x.\n\nText.\n", "ex01_torch_mlp", 5, 10, lang)
    assert md.splitlines()[2] == want


@pytest.mark.parametrize("tier", [0, 4, "2", 2.0, None])
def test_a_tier_that_does_not_exist_is_a_friendly_line(tier):
    text = hints.hint("ex01", tier)
    assert text.startswith("There is no hint") and 'hint("ex01", 3)' in text
    assert hints.hint("ex01", tier, "es").startswith("No hay pista")


def _all_texts() -> dict[str, str]:
    return {**english_texts(), **spanish_texts()}


def test_no_text_cites_a_document_students_do_not_have():
    """The course's source document ("the seed", its Figure 2) is not in the students' hands, and "seed"
    means an RNG seed here."""
    bad = re.compile(r"\bthe seeds?\b|\bseed's\b|\bseeds'|\bFigur[ea] \d|\bde la fuente\b|\bsemilla", re.I)
    found = [f"{k}: {m.group(0)!r}" for k, v in _all_texts().items() for m in [bad.search(v)] if m]
    assert not found, "\n".join(found)


def test_ex09_texts_do_not_state_the_derivative():
    """docs/students.md promises that neither a message nor a hint gives the answer: here, the derivatives."""
    answer = re.compile(r"dh/dw\s*=\s*x|dL/dh\s*=\s*2|2\s*\(\s*w\s*\*?\s*x\s*\+\s*b\s*\)\s*[·*]\s*x|dL/dw\s*=\s*2")
    found = [f"{k}: {m.group(0)!r}" for k, v in _all_texts().items() for m in [answer.search(v)] if m]
    assert not found, "\n".join(found)
