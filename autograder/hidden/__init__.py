"""Hidden suites, one module per exercise, each exposing ``suite``; :func:`load_suite` finds one by name,
:func:`available_exercises` says which are installed.

Never shipped to students and never visible to a student's worker (the sandbox's import blocker refuses
this package there). Imported by the engine, the builders (otter, snapshot), the reports and the pytest
plugin, in the grader's process only.
"""

from __future__ import annotations

import importlib
import importlib.util

from autograder.core.registry import EXERCISES, module_name, part
from autograder.core.suite import Suite


def load_suite(exercise: str) -> Suite:
    """The hidden suite of one exercise."""
    return part(exercise, "hidden").suite


def available_exercises() -> list[str]:
    """Exercises whose hidden suite is installed (all of them in a complete installation), in order."""
    return [ex for ex in EXERCISES if importlib.util.find_spec(module_name(ex, "hidden")) is not None]
