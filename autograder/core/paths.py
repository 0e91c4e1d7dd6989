"""Where things live (the exercise list itself comes from ``autograder.core.registry``)."""

from __future__ import annotations

import re
from pathlib import Path

# derived from the packages in autograder/exercises/ (re-exported for the engine's modules)
from autograder.core.registry import EXERCISES as EXERCISES
from autograder.core.registry import TORCH_ONLY as TORCH_ONLY

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions"
EXERCISES_DIR = ROOT / "exercises"
HIDDEN = ROOT / "autograder" / "hidden"
TESTS = ROOT / "tests"
# The marker lines around a solution's code (the stubs drop what lies between; self-study keeps it).
BEGIN = re.compile(r"^(\s*)# BEGIN SOLUTION\s*$")
END = re.compile(r"^\s*# END SOLUTION\s*$")


def private_dirs() -> list[str]:
    """Paths a student's worker must not read: the reference solutions, the hidden suites, our tests, the
    repository's history and builds, the sample submissions, and the otter zip's grading settings
    (its seed salt). Covered by an empty tmpfs (files: /dev/null) or carved out of Landlock's allow-list."""
    paths = [SOLUTIONS, HIDDEN, TESTS, ROOT / ".git", ROOT / "dist", ROOT / "examples",
             ROOT / "autograder" / "_otter_settings.json"]
    return [str(p) for p in paths if p.exists()]
