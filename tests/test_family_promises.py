"""A check may only draw what the stub's words promise (issue 37; docs/curriculum.md, ex13's meshes).

Every family of inputs a hidden check draws from (autograder.probing.promises.FAMILIES: optimizers that
need the params, torch optimizers other than SGD, gradients already present, class counts, model
kinds, mesh kinds, output widths) is named in that exercise's stub text, in English and in Spanish.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from autograder.probing.promises import FAMILIES, drawn, unpromised
from autograder.student.instructions_es import DOCSTRINGS_ES, INSTRUCTIONS_ES

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = sorted(p.stem for p in (ROOT / "exercises").glob("ex[0-9][0-9]_*.py"))


def english(exercise: str) -> str:
    """The generated stub's words: its module docstring and every def/class docstring."""
    tree = ast.parse((ROOT / "exercises" / f"{exercise}.py").read_text())
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef)))]
    return "\n".join(ast.get_docstring(n) or "" for n in nodes)


def spanish(exercise: str) -> str:
    """The Spanish stub's words: es.py's instructions and every docstring."""
    return "\n".join([INSTRUCTIONS_ES[exercise], *DOCSTRINGS_ES[exercise].values()])


def drawing_code(exercise: str) -> str:
    """The hidden suite and the exercise's probes: the code that draws the inputs."""
    paths = [ROOT / "autograder" / "hidden" / f"{exercise}.py", ROOT / "autograder" / "exercises" / exercise / "probes.py"]
    return "\n".join(p.read_text() for p in paths if p.exists())


@pytest.mark.parametrize("exercise", EXERCISES)
def test_every_family_drawn_is_named_in_both_languages(exercise: str) -> None:
    problems = unpromised(drawing_code(exercise), {"en": english(exercise), "es": spanish(exercise)})
    assert not problems, f"{exercise}: " + "; ".join(problems)


def test_each_family_is_drawn_somewhere() -> None:
    """A family no check draws is dead data (or its markers went stale with a rename)."""
    used = {f.name for ex in EXERCISES for f in drawn(drawing_code(ex))}
    assert used == {f.name for f in FAMILIES}


def test_expected_draws_are_detected() -> None:
    """The markers find the draws the issue names (ex13's Auto meshes, ex05's optimizers needing params...)."""
    names = {ex[:4]: {f.name for f in drawn(drawing_code(ex))} for ex in EXERCISES}
    assert "mesh_kinds" in names["ex13"] and "optax_needing_params" in names["ex13"]
    assert "optax_needing_params" in names["ex05"] and "optax_needing_params" in names["ex07"]
    assert {"torch_optimizers", "gradients_present"} <= names["ex02"] & names["ex11"]
    assert "model_kinds" in names["ex10"] and "class_counts" in names["ex03"] & names["ex07"]
    assert "output_widths" in names["ex04"]  # bce_loss/accuracy on several outputs: the first logit (issue 67)


def test_a_draw_the_text_does_not_name_fails() -> None:
    """A check that draws Auto meshes with a stub that names only "a 1-D mesh" is reported, per language."""
    source = "AUTO_MESH = \"Mesh(devices, ('data',))\"\ndef check(ctx):\n    return AUTO_MESH\n"
    silent = {"en": "a 1-D mesh with axis data", "es": "una malla 1-D con el eje data"}
    problems = unpromised(source, silent)
    assert [p.split(":")[0] for p in problems] == ["mesh_kinds [en]", "mesh_kinds [es]"]
    named = {"en": "meshes with Auto or Explicit axes", "es": "mallas con ejes Auto o Explicit"}
    assert unpromised(source, named) == []
    assert unpromised(source, {"en": named["en"], "es": silent["es"]}) == [problems[1]]


def test_a_keyword_argument_is_not_a_draw() -> None:
    """Only names read and attributes used draw: a keyword `num_classes=10` passes a fixed value."""
    assert drawn("def check(ctx):\n    ctx.both('p', num_classes=10)\n") == []
    assert [f.name for f in drawn("def check(ctx):\n    k = num_classes(ctx.rng)\n")] == ["class_counts"]
