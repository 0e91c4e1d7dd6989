"""The engine's layers (docs/architecture.md) hold: `lint-imports` keeps every contract of pyproject.toml's
``[tool.importlinter]`` (no upward import, no import between independent layers, the notebook's runtime
never reaching the grader's side), and it does break one when an import goes the wrong way."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from autograder.core.paths import ROOT

LINT = Path(sys.executable).with_name("lint-imports")  # import-linter, in the dev extra


def _lint(*args: str) -> subprocess.CompletedProcess:
    assert LINT.exists(), "import-linter is missing: pip install -e '.[dev]' (make setup)"
    return subprocess.run([str(LINT), "--no-cache", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_every_import_follows_the_layers():
    done = _lint()
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_an_import_against_the_layers_breaks_a_contract(tmp_path):
    """The checker is live: the engine imports the core, so a contract saying the core may import the engine
    but not the other way round (core above engine) is broken, and lint-imports says so."""
    config = tmp_path / "contracts.toml"
    config.write_text('[tool.importlinter]\nroot_package = "autograder"\n\n[[tool.importlinter.contracts]]\n'
                      'name = "upside down"\ntype = "layers"\nlayers = ["autograder.core", "autograder.engine"]\n')
    done = _lint("--config", str(config))
    assert done.returncode != 0 and "BROKEN" in done.stdout, done.stdout[-2000:]
    assert "autograder.engine" in done.stdout and "autograder.core" in done.stdout
