"""The engine: one grading run, from submissions to rows.

Owns the run (``run``: ``GradingRun``, scheduling; ``run_workers``: starting its workers; ``reference``: the
reference workers; ``exercise``: one exercise's grading and the **verdicts**: each hidden check judges what the
student's worker and the reference worker measured, seeing only an ``ExerciseHost`` of the run), the rows no
check earned and a finished row (``rows``, shared with the scale-out), the session ``tapetrace grade`` runs
(``session``) and resuming an interrupted run (``resume``). Imports the workers, the sandbox, the
submissions, the content packages (the hidden suites, by name), probing and the core; imported by the
builders (otter), the scale-out, the CLI and the pytest plugin. Names are imported on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import Any

_PUBLIC: dict[str, str] = {  # name -> its module (imported on first use)
    "CACHE_ENV": "jaxcache",
    "ExerciseGrading": "exercise",
    "ExerciseHost": "host",
    "GradingRun": "run",
    "HideRefused": "reading",
    "ResumeRefused": "resume",
    "early_row": "rows",
    "exercise_checks": "rows",
    "hide_places": "reading",
    "jax_cache_dir": "jaxcache",
    "merge": "resume",
    "plan": "resume",
    "read_error": "reading",
    "read_one": "reading",
    "schedule": "run",
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
