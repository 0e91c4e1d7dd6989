"""Reports: what a grading run's rows become for people.

Owns the tables, JSON and CSV (``report``), the per-student feedback (``feedback``), the progress bar
(``progress``) and the instructor's plots (``plots``). Imports the engine (a regrade's diff), the
submissions (similarity reads the graded code), the hidden suites (otter's results), the core and the
messages (autograder/reports/README.md); imported by the scale-out and the CLI. Names are imported on
first use (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import Any

_PUBLIC: dict[str, str] = {  # name -> its module (imported on first use)
    "Checkpoint": "report",
    "DPI": "plots",
    "PLOTS": "plots",
    "Progress": "progress",
    "ReportError": "summary",
    "STATUS_WORDS": "feedback",
    "build_report": "summary",
    "check_stats": "plots",
    "compact_table": "report",
    "feedback_html": "feedback",
    "feedback_markdown": "feedback",
    "feedback_names": "feedback",
    "from_otter": "summary",
    "hardest_first": "plots",
    "merge_callbacks": "progress",
    "read_inputs": "summary",
    "read_json": "report",
    "safe_stem": "feedback",
    "summary_line": "report",
    "table": "report",
    "terminal_text": "report",
    "write_csv": "report",
    "write_feedback": "feedback",
    "write_json": "report",
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
