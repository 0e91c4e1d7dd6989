"""The student notebook on the floor and the newest supported stacks (jax/flax/optax/numpy/matplotlib/IPython;
torch: the main venv's), run as a student would: filled with the solutions every check passes, untouched every
exercise says "not attempted" (scripts/stack_matrix.py; the whole matrix: docs/supported-versions.md).

The floor's venv is built once with pip from the registry under .tapetrace-cache/stacks/ (ignored); without
the registry the test skips, saying so. The newest stack is the pinned one while constraints.txt pins the newest
releases (then the main venv runs it, no venv is built).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.core.paths import ROOT

pytest.importorskip("nbclient")
_spec = importlib.util.spec_from_file_location("stack_matrix", ROOT / "scripts" / "stack_matrix.py")
stack_matrix = sys.modules["stack_matrix"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stack_matrix)


def _registry_reachable() -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-cache-dir", "-d", tmp,
                               "optax==" + stack_matrix.STACKS["ci-floor"].pins["optax"]],
                              capture_output=True, text=True, timeout=300)
    return proc.returncode == 0


def _python(name: str) -> Path:
    try:
        return stack_matrix.ensure(name)
    except stack_matrix.Unavailable as err:
        if not _registry_reachable():
            pytest.skip(f"the package registry is unreachable, so the {name} stack's venv cannot be built: {err}")
        raise


@pytest.mark.slow
@pytest.mark.parametrize(("name", "lang"), [("ci-floor", "en"), ("ci-floor", "es"), ("ci-newest", "en")])
def test_notebook_on_the_stack(tmp_path, name, lang):
    python = _python(name)
    have = stack_matrix.installed(python)
    for dist, version in stack_matrix.STACKS[name].pins.items():
        assert have[dist].split("+")[0] == version, (dist, have)
    run = stack_matrix.run_notebook(python, lang, tmp_path)
    assert not run["errors"], run["errors"]
    assert "UNSUPPORTED" not in run["setup"] and "NO SOPORTADAS" not in run["setup"], run["setup"]
    assert set(run["filled"]) == set(run["untouched"]) == set(run["exercises"])
    for ex in run["exercises"]:
        assert run["filled"][ex]["status"] == "passed", (ex, run["filled"][ex])
        assert run["untouched"][ex]["status"] == "not attempted", (ex, run["untouched"][ex])
