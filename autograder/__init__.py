"""tapetrace: autograded PyTorch-vs-JAX exercises ("the tape vs the trace").

Public surface, re-exported explicitly; internals live in ``_``-modules. The names are imported on first
use (PEP 562): importing the package imports nothing else, so loading the pytest plugin
(``autograder.pytest_plugin``) imports no library before the plugin can refuse a command line that would
let pytest put a submission's folder on the import path (a ``numpy.py`` there would shadow numpy).
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_PUBLIC = {
    "EXERCISES": ("autograder.core.paths", "EXERCISES"),
    "Ctx": ("autograder.core.suite", "Ctx"),
    "Fail": ("autograder.core.suite", "Fail"),
    "GradingRun": ("autograder.engine.run", "GradingRun"),
    "Suite": ("autograder.core.suite", "Suite"),
    "first_difference": ("autograder.core.compare", "first_difference"),
    "load_submission": ("autograder.submissions.loader", "load"),
    "tolerance": ("autograder.core.tolerances", "tolerance"),
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'autograder' has no attribute {name!r}")
    module, attr = _PUBLIC[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
