"""The core: the grader's shared vocabulary, below every other layer of the engine.

Owns the exercise registry and its discovery, paths, languages and the one catalogue (``i18n``), the
text boundary (``text``), tolerances and comparison (``compare``), the checks' model (``suite``: ``Suite``,
``Ctx``, ``Fail``), the wire frames and the worker protocol, statuses, devices and the datasets. Ships to
students in part (the notebook's runtime). Imports only ``autograder.messages`` (plain data); finds the
exercise packages by name at run time. Names are imported on first use (PEP 562): importing this package
imports nothing else.
"""

from __future__ import annotations

import importlib
from typing import Any

_PUBLIC: dict[str, str] = {  # name -> its module (imported on first use)
    "BEGIN": "paths",
    "Check": "suite",
    "CheckFailure": "suite",
    "Ctx": "suite",
    "DATA_FILE": "data",
    "DeviceError": "device",
    "ELLIPSIS": "text",
    "END": "paths",
    "EXERCISES": "registry",
    "EXERCISES_DIR": "paths",
    "EXIT_NOT_ALL_GRADED": "status",
    "Exercise": "exercise",
    "FRAMEWORKS": "exercise",
    "Fail": "suite",
    "GraderBug": "suite",
    "INTERNAL_ERROR": "suite",
    "JAX_ONLY": "registry",
    "LANGS": "i18n",
    "MAX_FRAME": "wire",
    "MESSAGE_CHARS": "text",
    "NAME_CHARS": "text",
    "PACKAGE_NAME": "exercise",
    "PRECISION": "device",
    "RECORD_CHARS": "text",
    "REGISTRY": "registry",
    "ROOT": "paths",
    "SOLUTIONS": "paths",
    "STATUSES": "status",
    "StudentProblem": "suite",
    "Suite": "suite",
    "TOLERANCES": "tolerances",
    "TORCH_ONLY": "registry",
    "Tol": "tolerances",
    "UnknownExercise": "registry",
    "WireError": "wire",
    "ZYGOTE_NEEDS": "registry",
    "catalogue": "i18n",
    "catalogue_modules": "i18n",
    "check_rng": "protocol",
    "clean": "text",
    "clean_reason": "status",
    "cost": "registry",
    "count_graders": "status",
    "csv_cell": "text",
    "decode": "wire",
    "describe": "device",
    "discover": "exercise",
    "encode": "wire",
    "first_difference": "compare",
    "get_language": "i18n",
    "grader_row": "status",
    "graders_exercises": "status",
    "label": "i18n",
    "load": "data",
    "localize_detail": "compare",
    "memory_words": "protocol",
    "module_name": "registry",
    "package_names": "exercise",
    "placeholders": "i18n",
    "private_dirs": "build_record",
    "probe_error": "protocol",
    "recv": "wire",
    "reference_key": "protocol",
    "render": "i18n",
    "result_of": "suite",
    "run_check": "suite",
    "satisfies": "device",
    "section": "i18n",
    "send": "wire",
    "set_language": "i18n",
    "terminal": "text",
    "to_bytes": "text",
    "tolerance": "tolerances",
    "worker_needs": "registry",
    "zygote_needs": "registry",
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
