"""Submissions: reading what a student handed in, and running its code.

Owns the loader (a folder, a ``.py`` file or a notebook -> modules' sources), the load guard (a
submission's imports refused before they run), the notebook cells (``cells``: a notebook's code as a
module, its habits; ``ipython_cells``: one cell as IPython runs it; ``statements``: what a statement
binds and reads; ``fstrings``: the one parse of a module's code, Python 3.12's f-strings accepted on an
older Python) and running them (``standins``: the notebook's helpers as harmless stand-ins;
``execute``). Ships to students in part (cells, ipython_cells, statements, fstrings, standins,
execute). Imports
the core only; imported by the workers, the engine, the builders and the scale-out. Names are imported
on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import Any

_PUBLIC: dict[str, str] = {  # name -> its module (imported on first use)
    "CONTEXT_BUDGET": "execute",
    "MAX_NOTEBOOK_BYTES": "loader",
    "MAX_SOURCE_BYTES": "loader",
    "ReadBudgetExceeded": "loadguard",
    "Reader": "loadguard",
    "Refused": "loader",
    "Submission": "loader",
    "SubmissionError": "loader",
    "add_standins": "standins",
    "graded_sources": "cells",
    "install_colab_standin": "standins",
    "load": "loader",
    "load_bounded": "loadguard",
    "notebook_cells": "cells",
    "notebook_sources": "loader",
    "parse_source": "fstrings",
    "prepare": "execute",
    "read_seconds": "loadguard",
    "remove_colab_standin": "standins",
    "rewrite_fstrings": "fstrings",
    "run": "execute",
    "run_context": "execute",
    "sections": "cells",
    "split_graded": "cells",
    "transform_cell": "ipython_cells",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
