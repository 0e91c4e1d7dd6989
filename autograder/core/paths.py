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


def checkout_private() -> list[Path]:
    """The checkout's own private places (existing or not): the reference solutions, the hidden suites, our tests,
    the repository's history and builds (``dist/``), the sample submissions, the otter zip's grading settings (its
    seed salt). With the places recorded outside it: :func:`autograder.core.build_record.private_dirs`."""
    return [SOLUTIONS, HIDDEN, TESTS, ROOT / ".git", ROOT / "dist", ROOT / "examples",
            ROOT / "autograder" / "_otter_settings.json"]

