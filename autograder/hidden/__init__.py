"""Hidden suites, one module per exercise, each exposing ``suite``; :func:`load_suite` finds one by name.

Never shipped to students and never visible to a student's worker (the sandbox's import blocker refuses
this package there). Imported by the engine, the builders (otter, snapshot), the reports and the pytest
plugin, in the grader's process only.
"""

from __future__ import annotations

import importlib

from autograder.core.suite import Suite


def load_suite(exercise: str) -> Suite:
    """The hidden suite of one exercise."""
    return importlib.import_module(f"autograder.hidden.{exercise}").suite
