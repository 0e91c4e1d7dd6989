"""Builders: what students and instructors receive.

Owns the student template (``build``: the notebook, stubs, ``check.py``, READMEs; ``notebook``: writing the
notebook; ``instructions``: each exercise's instructions as Markdown), the notebook's public runtime
(``runtime``: what ships and that it stands alone; ``public``: the in-notebook runner of the public checks,
with ``public_snapshot``, ``public_student`` and ``public_graded``; ``snapshot``: the reference's results they
compare with), the otter autograder zip (``otter_zip``: building it; ``otter``: the bridge its plugin and test
files load; ``otter_folder``: the submission folder before otter reads it; ``otter_grade``: the engine's run
in it), the stubs (``stubs``), the privacy of the build's reference material wherever it lands (``private``) and the file
templates (``templates``). Imports the engine, the workers, the
sandbox, the submissions, the content packages, probing and the core; imported by the CLI only. Names are
imported on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import Any

_PUBLIC: dict[str, str] = {  # name -> its module (imported on first use)
    "BuildError": "runtime",
    "CHECK_PY": "build",
    "CPU_TORCH_INDEX": "otter_zip",
    "CheckResult": "public",
    "DIST": "build",
    "NOTEBOOK": "notebook",
    "PKG": "runtime",
    "PLUGIN": "otter",
    "PUBLIC_SEED": "snapshot",
    "RESULT_ENV": "otter",
    "RUNTIME_FILE": "notebook",
    "RUNTIME_INIT": "runtime",
    "RUNTIME_MODULES": "runtime",
    "RUN_OTTER": "otter_zip",
    "SELF_STUDY_ARC": "runtime",
    "SETTINGS": "otter",
    "SETUP_TAIL": "otter_zip",
    "SETUP_TEMPLATE": "notebook",
    "SNAPSHOT_ARC": "snapshot",
    "StubError": "stubs",
    "TEMPLATES": "build",
    "TEST_FILE": "otter_zip",
    "ZIP_NAME": "otter_zip",
    "after_otter": "otter_folder",
    "before_otter": "otter_folder",
    "build_template": "build",
    "build_zip": "otter_zip",
    "check_py": "build",
    "code_cell_source": "notebook",
    "committed_snapshot": "build",
    "docstring_markdown": "instructions",
    "dumps": "notebook",
    "exercise_stub": "build",
    "expected_stubs": "stubs",
    "fill_with": "notebook",
    "graded_module": "public_graded",
    "graded_view": "public_graded",
    "instructions": "instructions",
    "notebook_json": "public_graded",
    "otter_check": "otter",
    "present": "build",
    "public_checks": "snapshot",
    "render_template": "build",
    "requirements": "otter_zip",
    "role_of": "notebook",
    "run_checks": "public",
    "runtime_members": "runtime",
    "runtime_of": "notebook",
    "set_language": "public",
    "setup_cell": "notebook",
    "setup_source": "notebook",
    "snapshot_reference": "public_snapshot",
    "solution_regions": "stubs",
    "source_of": "notebook",
    "stale": "build",
    "strip_submission": "otter_folder",
    "stub_source": "stubs",
    "student_readme": "build",
    "submission_path": "otter",
    "test_file_source": "otter_zip",
    "without_runtime": "notebook",
    "write_stubs": "stubs",
    "zip_members": "runtime",
    "zip_name": "build",
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
