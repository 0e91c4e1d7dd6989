"""The student notebook on the floor and the newest supported stacks (jax/flax/optax/numpy/matplotlib/IPython;
torch: the main venv's), run as a student would: filled with the solutions every check passes, untouched every
exercise says "not attempted" (scripts/stack_matrix.py; the whole matrix: docs/supported-versions.md).

The floor's run is tests/test_colab.py's English Colab run, whose kernel is the floor's venv (one kernel session
for both claims; its test there, test_the_english_notebook_on_the_floor_stack, asserts what this file's floor
case did). The floor's venv is built once with pip from the registry under ~/.cache/tapetrace/stacks/ (outside the
checkout, keyed by its pins: later runs and fresh clones on this machine reuse it); without the registry the
test skips, saying so. The newest stack is the pinned one while constraints.txt pins the newest
releases (then it is the main venv, no venv is built, and tests/test_colab.py's Spanish run is its run).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path

import pytest

from autograder.core.paths import ROOT
from autograder.student import stack

pytest.importorskip("nbclient")
_spec = importlib.util.spec_from_file_location("stack_matrix", ROOT / "scripts" / "stack_matrix.py")
stack_matrix = sys.modules["stack_matrix"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stack_matrix)


def _python(name: str) -> Path:
    try:
        return stack_matrix.ensure(name)
    except stack_matrix.Unavailable as err:
        if not stack_matrix.registry_reachable(name):
            pytest.skip(f"the package registry is unreachable, so the {name} stack's venv cannot be built: {err}")
        raise


@pytest.mark.slow
# one language each (the texts do not depend on the stack): both stacks and both languages in two kernels; the
# floor's (English) is tests/test_colab.py's English run, whose kernel is the floor's venv
@pytest.mark.parametrize(("name", "lang"), [("ci-newest", "es")])
def test_notebook_on_the_stack(tmp_path, name, lang):
    python = _python(name)
    have = stack_matrix.installed(python)
    for dist, version in stack_matrix.STACKS[name].pins.items():
        assert have[dist].split("+")[0] == version, (dist, have)
    if python == Path(sys.executable) and lang == "es":
        # the main venv is this stack: tests/test_colab.py runs this notebook in it, in an empty folder (Spanish:
        # filled, every check passes; put back untouched, every exercise not attempted; the set-up cell flags
        # nothing), so it is not run a second time here
        return
    run = stack_matrix.run_notebook(python, lang, tmp_path)
    assert not run["errors"], run["errors"]
    assert "UNSUPPORTED" not in run["setup"] and "NO SOPORTADAS" not in run["setup"], run["setup"]
    assert set(run["filled"]) == set(run["untouched"]) == set(run["exercises"])
    for ex in run["exercises"]:
        assert run["filled"][ex]["status"] == "passed", (ex, run["filled"][ex])
        assert run["untouched"][ex]["status"] == "not attempted", (ex, run["untouched"][ex])


def _pad(version: str) -> tuple[int, ...]:
    return (stack.parse(version) + (0,) * 4)[:4]


def test_the_declared_floors_are_measured_stacks():
    """Each library's lowest supported version is one a measured stack ran, and every measured supported
    stack lies inside the ranges: the ranges say exactly what was measured."""
    measured = [stack_matrix.STACKS[n] for n in stack_matrix.MATRIX_STACKS if n != "outside"]
    for dist, (low, high) in stack.SUPPORTED.items():
        seen = [s.pins[dist] for s in measured if dist in s.pins]
        assert _pad(low) in {_pad(v) for v in seen}, (dist, low, seen)
        assert all(_pad(v) < _pad(high) for v in seen), (dist, high, seen)
    pythons = {tuple(int(x) for x in s.python.split(".")) for s in measured if s.python}
    assert min(pythons) == stack.PYTHON[0] and max(pythons) < stack.PYTHON[1]
    outside = stack_matrix.STACKS["outside"].pins
    assert stack.problems(outside, python=(3, 11)), "the 'outside' stack must be outside the ranges"


def test_the_docs_show_the_matrix_the_script_printed():
    page = (ROOT / "docs" / "supported-versions.md").read_text(encoding="utf-8")
    table = page.split(stack_matrix.BEGIN, 1)[1].split(stack_matrix.END, 1)[0].strip().splitlines()
    assert table[0] == stack_matrix.matrix([]).splitlines()[0]
    rows = {line.split(" (", 1)[0].strip("| "): line for line in table[2:]}
    assert set(rows) == set(stack_matrix.MATRIX_STACKS)
    for name, line in rows.items():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if name == "outside":
            assert cells[9] != "nothing" and "unsupported versions: all" in cells[10], line
        else:
            assert cells[9] == "nothing" and cells[10] == "13/13 / 13/13" and cells[11] == "13/13 / 13/13", line


def test_stack_venvs_are_kept_outside_the_checkout_one_per_pin_set(monkeypatch):
    """A fresh clone reuses the venv an earlier run built (it is not under the checkout); a changed pin gets
    a venv of its own instead of rebuilding or reusing the old one."""
    if "TAPETRACE_STACKS" not in __import__("os").environ:
        assert ROOT.resolve() not in stack_matrix.CACHE.resolve().parents
    floor = stack_matrix.venv_dir("ci-floor")
    assert floor.parent == stack_matrix.CACHE and floor.name.startswith("ci-floor-")
    assert floor == stack_matrix.venv_dir("ci-floor") != stack_matrix.venv_dir("ci-newest")
    assert stack_matrix.venv_python("ci-floor") == floor / "bin" / "python"
    spec = stack_matrix.STACKS["ci-floor"]
    monkeypatch.setitem(stack_matrix.STACKS, "ci-floor",
                        dataclasses.replace(spec, pins={**spec.pins, "optax": "0.2.5"}))
    assert stack_matrix.venv_dir("ci-floor") != floor
