"""The type checker holds: mypy, configured in pyproject.toml's ``[tool.mypy]`` (strict on the core, the engine,
the reports and the workers' records), reports 0 errors there, and every ``# type: ignore`` left in that scope
names its error code and says why on its own line.

mypy runs in a subprocess with the project's own configuration; its cache is the checkout's ``.mypy_cache/``
(ignored by git; a run after a small change takes seconds, a first one about a minute).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tomllib

import pytest

from autograder.core.paths import ROOT

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                                reason="mypy is not installed: pip install -e '.[dev]' (make setup)")

# Files of the scope that other work in progress is changing now: left out of this run, their imports still read
# (follow_imports = "silent"). To be emptied once that work lands: each one is then checked as the rest are.
NOT_YET: set[str] = set()  # every file of the scope is checked (was: the files being edited at the time)
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<rest>.*)$")


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def scope() -> list[str]:
    """The files ``[tool.mypy]`` checks (its ``files``, folders expanded), relative to the checkout."""
    out: list[str] = []
    for entry in _config()["files"]:
        path = ROOT / entry
        found = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        out += [p.relative_to(ROOT).as_posix() for p in found]
    return out


def _mypy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                           "--no-error-summary", "--no-pretty", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)


def test_the_scope_is_the_contract_side():
    files = set(scope())
    for folder in ("autograder/core/", "autograder/engine/", "autograder/reports/"):
        assert any(f.startswith(folder) for f in files), folder
    assert "autograder/core/records.py" in files and "autograder/workers/records.py" in files
    assert NOT_YET <= files, f"left out but not in the scope: {sorted(NOT_YET - files)}"


def test_mypy_reports_no_error_in_its_scope():
    files = [f for f in scope() if f not in NOT_YET]
    done = _mypy(*files)
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert done.returncode == 0 and not errors, "\n".join(errors[:60]) or (done.stdout + done.stderr)[-3000:]


def test_the_checker_is_live(tmp_path):
    """The same configuration refuses a test row without its fields (the row types of core/records.py, read)."""
    wrong = tmp_path / "wrong_row.py"
    wrong.write_text("from autograder.core.records import TestRow\n\nrow: TestRow = {'name': 'forward'}\n")
    done = _mypy(str(wrong))
    assert done.returncode == 1 and "TestRow" in done.stdout and "missing keys" in done.stdout.lower(), done.stdout[-2000:]


def test_every_ignore_names_its_code_and_says_why():
    bare = []
    for rel in scope():
        if rel in NOT_YET:
            continue
        for n, line in enumerate((ROOT / rel).read_text(encoding="utf-8").splitlines(), 1):
            m = IGNORE.search(line)
            if m and not (m["codes"] and re.match(r"\s*#\s*\S", m["rest"])):
                bare.append(f"{rel}:{n}: {line.strip()}")
    assert not bare, "write `# type: ignore[code]  # why`:\n" + "\n".join(bare)


def test_mypy_cache_is_ignored_by_git():
    done = subprocess.run(["git", "check-ignore", "-q", ".mypy_cache/"], cwd=ROOT, capture_output=True)
    if done.returncode == 128:
        pytest.skip("not a git checkout")
    assert done.returncode == 0, ".mypy_cache/ must be in .gitignore"


def test_the_ignore_rule_reads_codes_and_reasons():
    def ok(line: str) -> bool:
        m = IGNORE.search(line)
        return bool(m and m["codes"] and re.match(r"\s*#\s*\S", m["rest"]))

    assert ok("x = f()  # type: ignore[attr-defined]  # typeshed omits it")
    assert not ok("x = f()  # type: ignore[attr-defined]")
    assert not ok("x = f()  # type: ignore  # no code")
