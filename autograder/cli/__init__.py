"""The ``tapetrace`` command: one thin module per subcommand (``cli/<name>.py``: ``add_parser``, ``run``).

``main`` (the console script's entry point, ``autograder.cli:main``) and ``build_parser`` live in
:mod:`autograder.cli.app`; ``python -m autograder.cli`` runs it. The top layer: imports any layer below;
nothing imports it. Names are imported on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import Any

_PUBLIC: dict[str, str] = {  # name -> its module (imported on first use)
    "COMMANDS": "app",
    "FIGURE_NAME": "figures",
    "FILES": "new",
    "NewError": "new",
    "STUB": "new",
    "build_parser": "app",
    "function_name": "new",
    "main": "app",
    "plan": "new",
    "train_both": "figures",
    "write": "new",
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
