"""A newcomer's semester without a traceback (issue 67's defects): each defect a test that failed before.

1. After `make demo` (the base package, no development extras) `tapetrace build` crashed with
   ``ModuleNotFoundError: No module named 'otter'``; now it says in one line which libraries are missing and
   the command that installs them, before it writes anything. An optional library missing deeper in any
   command's path is the same one line (``cli.app``'s net), never a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.cli import app

ROOT = Path(__file__).resolve().parents[1]

# the CLI in a process where these modules are "not installed" (sys.modules[name] = None: import fails and
# importlib.util.find_spec says None, as for a library that is not there)
WITHOUT = "import sys\nfor m in {mods!r}: sys.modules[m] = None\nfrom autograder.cli import main\nsys.exit(main({argv!r}))\n"


def _cli_without(mods: list[str], argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", WITHOUT.format(mods=mods, argv=argv)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(("argv", "named"), [
    (["build", "--only", "otter", "--no-verify"], ["otter-grader"]),
    (["build", "--only", "otter"], ["otter-grader", "nbformat", "nbclient", "ipykernel"]),
])
def test_build_without_the_build_extras_says_what_is_missing_in_one_line(argv, named, tmp_path):
    proc = _cli_without(["otter", "nbformat", "nbclient", "ipykernel"], [*argv, "--out", str(tmp_path / "dist")],
                        tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr[-2000:]
    line = proc.stderr.strip()
    assert line.startswith("tapetrace build: ") and "make setup" in line and ".[build]" in line, line
    for name in named:
        assert name in line, (name, line)
    assert not (tmp_path / "dist").exists(), "nothing is written before the check"


def _stubs_raising(monkeypatch, err: ModuleNotFoundError) -> None:
    """`tapetrace stubs` whose body meets ``err`` (a subcommand's ``run`` is bound when the parser is built)."""
    from autograder.cli import stubs

    def run(_args):
        raise err

    monkeypatch.setattr(stubs, "run", run)


def test_a_missing_optional_library_deeper_in_a_command_is_one_line(monkeypatch, capsys):
    _stubs_raising(monkeypatch, ModuleNotFoundError("No module named 'otter.generate'", name="otter.generate"))
    monkeypatch.setitem(sys.modules, "otter", None)
    assert app.main(["stubs"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tapetrace: otter-grader is not installed (needed by `tapetrace stubs`)"), err
    assert "make setup" in err and len(err.splitlines()) == 1, err


def test_a_missing_module_that_is_not_an_optional_library_is_not_hidden(monkeypatch):
    _stubs_raising(monkeypatch, ModuleNotFoundError("No module named 'autograder.nowhere'", name="autograder.nowhere"))
    with pytest.raises(ModuleNotFoundError):
        app.main(["stubs"])  # the grader's own bug: its traceback, never a line blaming the installation
