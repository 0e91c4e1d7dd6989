"""Write each answer once: the committed stubs are exactly what `tapetrace stubs` generates."""

from __future__ import annotations

import ast
import re
import subprocess
import sys

import pytest

from autograder.builders import stubs as _stubs
from autograder.core.paths import EXERCISES_DIR, ROOT


def test_committed_stubs_match_solutions():
    expected = _stubs.expected_stubs()
    assert expected, "no solutions found"
    for name, text in expected.items():
        path = EXERCISES_DIR / f"{name}.py"
        assert path.exists(), f"exercises/{name}.py missing: run `tapetrace stubs`"
        assert path.read_text() == text, f"exercises/{name}.py is stale: run `tapetrace stubs`"


def test_every_solution_has_regions_and_stub_raises():
    for name, text in _stubs.expected_stubs().items():
        sol = (ROOT / "solutions" / f"{name}.py").read_text()
        assert _stubs.solution_regions(sol), f"{name}: no BEGIN/END SOLUTION region"
        assert text.count("raise NotImplementedError") == len(_stubs.solution_regions(sol))


@pytest.mark.parametrize("bad", ["    # BEGIN SOLUTION\nx = 1\n", "# END SOLUTION\n",
                                 "# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION\n"])
def test_unbalanced_markers_are_errors(bad):
    with pytest.raises(_stubs.StubError):
        _stubs.stub_source(bad, "exXX")


def test_stub_keeps_indentation_and_raises():
    src = "def f(x):\n    # BEGIN SOLUTION\n    return x + 1\n    # END SOLUTION\n"
    out = _stubs.stub_source(src, "ex00")
    ns: dict = {}
    exec(out, ns)
    with pytest.raises(NotImplementedError):
        ns["f"](1)
    assert "return x + 1" not in out


def test_stubs_command_regenerates(tmp_path):
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "stubs"], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    test_committed_stubs_match_solutions()


def test_contract_checker_agrees():
    checker = ROOT.parent / "shared" / "tools" / "contract_check.py"
    if not checker.exists():
        pytest.skip("../shared/tools/contract_check.py not beside this checkout")
    done = subprocess.run([sys.executable, str(checker), str(ROOT)], capture_output=True, text=True)
    real = [line for line in done.stdout.splitlines()
            if "differs from the contract" in line and not _split_artifact(line)]
    assert "problem(s)" in done.stdout, done.stdout[-2000:]
    assert not real, "\n".join(real)
    others = [line for line in done.stdout.splitlines()
              if line.startswith(("exercises/", "solutions/")) and "differs from the contract" not in line]
    assert not others, "\n".join(others)


def _split_artifact(line: str) -> bool:
    """Whether a checker complaint comes only from its comma split of a bracketed annotation.

    The shared checker splits ``fn: Callable[[], Tensor]`` at every comma, so it expects a
    parameter called ``Tensor]``. Such a complaint is an artifact only when the contract's
    signature, split at top-level commas, names exactly the parameters the file defines.
    """
    found = re.search(r"^(\S+): `(\w+)\((.*?)\)` differs from the contract", line)
    if found is None:
        return False
    path, name, _ = found.groups()
    text = (ROOT.parent / "shared" / "CURRICULUM.md").read_text()
    sig = re.search(rf"^\s*def {name}\((.*)\)\s*->", text, re.M)
    if sig is None:
        return False
    expected, depth, current = [], 0, ""
    for char in sig.group(1) + ",":
        depth += char in "[(" and 1 or 0
        depth -= char in "])" and 1 or 0
        if char == "," and depth == 0:
            if current.strip():
                expected.append(current.split(":")[0].split("=")[0].strip().lstrip("*"))
            current = ""
        else:
            current += char
    tree = ast.parse((ROOT / path).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return [a.arg for a in node.args.args] == expected
    return False
