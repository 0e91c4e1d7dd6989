"""The otter-grader plugin of the tapetrace autograder zip (``otter_config.json`` names it).

otter imports it by name in its own process, before the submission's notebook reaches a kernel:
on Gradescope and in ``otter grade``'s image from the zip's ``files/`` (``run_otter.py`` puts it on
the import path), under ``otter run`` from the installed tapetrace package. It is a trampoline, the
same in every version: the work is done by the zip's own copy of ``autograder/builders/otter.py``
(``plugin_before_execution``, ``plugin_after_grading``), loaded by path from the autograder folder
otter unpacked, so the engine that grades is always the zip's. See ``autograder.builders.otter`` for the
mechanism: the kernel gets an empty notebook, the engine grades the submission file in its sandboxed
workers, and otter's scores are the engine's.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

from otter.plugins import AbstractOtterPlugin

BRIDGE = "_tapetrace_otter_bridge"  # the name the zip's test files look the bridge up under, too


def bridge(submission_path: str) -> Any:
    """The zip's ``autograder/builders/otter.py`` module, for a submission otter placed in ``AUTOGRADER/submission/``."""
    agdir = os.path.dirname(os.path.dirname(os.path.abspath(submission_path)))
    path = os.path.join(agdir, "source", "files", "autograder", "builders", "otter.py")
    module = sys.modules.get(BRIDGE)
    if module is not None and getattr(module, "__file__", None) == path:
        return module
    if not os.path.isfile(path):
        raise RuntimeError(f"the tapetrace engine is missing from the autograder ({path})")
    spec = importlib.util.spec_from_file_location(BRIDGE, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[BRIDGE] = module
    return module


class TapetracePlugin(AbstractOtterPlugin):
    """Grades with the tapetrace engine; otter's kernel never runs a cell of the submission."""

    def before_grading(self, config: Any) -> None:
        """Takes everything but the submission out of its folder before otter's runner reads the folder."""
        bridge(self.submission_path).plugin_before_grading(self, config)

    def before_execution(self, submission: Any) -> Any:
        """Grades the submission file and returns an empty notebook for otter to execute."""
        return bridge(self.submission_path).plugin_before_execution(self, submission)

    def after_grading(self, results: Any) -> None:
        """Replaces the kernel's results with the zip's test files run here on the engine's result."""
        bridge(self.submission_path).plugin_after_grading(self, results)
