"""The engine's layers (docs/architecture.md) hold: `lint-imports` keeps every contract of pyproject.toml's
``[tool.importlinter]`` (no upward import, no import between independent layers, the notebook's runtime
never reaching the grader's side, no import loop inside a room), and it does break one when an import goes the
wrong way.

A room is a package, ``autograder/<package>/``: its modules import each other one way only (the ``rooms``
contract, ``acyclic_siblings``). Every import counts, one inside a function too: a loop closed lazily is still
two modules that need each other, met later (a lazy import defers a cost, it does not settle which module is
below the other)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

from autograder.core.paths import ROOT

LINT = Path(sys.executable).with_name("lint-imports")  # import-linter, in the dev extra


def _lint(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    assert LINT.exists(), "import-linter is missing: pip install -e '.[dev]' (make setup)"
    return subprocess.run([str(LINT), "--no-cache", *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env=env)


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


def test_no_room_has_an_import_loop():
    """The ``rooms`` contract covers every package of autograder/ (its ``ancestors``: each direct child, drilled
    into), and ``test_every_import_follows_the_layers`` finds it kept."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    (rooms,) = [c for c in contracts if c.get("id") == "rooms"]
    assert rooms["type"] == "acyclic_siblings" and rooms["ancestors"] == ["autograder.*"]
    assert not rooms.get("ignore_imports") and not rooms.get("skip_descendants") and "depth" not in rooms
    done = _lint("--contract", "rooms")
    assert done.returncode == 0 and "KEPT" in done.stdout, done.stdout[-4000:]


def test_a_loop_inside_a_room_breaks_it_even_through_a_function(tmp_path):
    """The checker is live: two modules of one package, one importing the other at its top and the other
    importing it back inside a function, break an ``acyclic_siblings`` contract like the project's."""
    room = tmp_path / "house" / "room"
    room.mkdir(parents=True)
    (tmp_path / "house" / "__init__.py").write_text("")
    (room / "__init__.py").write_text("")
    (room / "upper.py").write_text("from house.room import lower\n\n\ndef f():\n    return lower.g()\n")
    (room / "lower.py").write_text("def g():\n    from house.room import upper\n\n    return upper\n")
    config = tmp_path / "contracts.toml"
    config.write_text('[tool.importlinter]\nroot_package = "house"\n\n[[tool.importlinter.contracts]]\n'
                      'name = "no loops"\ntype = "acyclic_siblings"\nancestors = ["house.*"]\n')
    done = _lint("--config", str(config), cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode != 0 and "BROKEN" in done.stdout, done.stdout[-2000:]
    assert ".upper" in done.stdout and ".lower" in done.stdout
