"""The sandbox: what a student's worker may not do, enforced by the kernel.

Owns the isolation frame (``isolate``: the layers in order, rlimits, the import blocker, the record) and
its layers: namespaces (``namespaces``), an unprivileged uid and no capabilities (``privileges``), a pids
cgroup (``pids_cgroup``), Landlock (``landlock``), seccomp (``seccomp``); the shared C library handle
(``libc``) and the memory and disk quotas (``quota``). Imports the core only (and nothing of the grader's
verdicts); imported by the workers, the engine, the builders (otter) and the scale-out. Names are
imported on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import Any

_PUBLIC: dict[str, str] = {  # name -> its module (imported on first use)
    "AF_UNIX": "seccomp",
    "ALL": "landlock",
    "FILE_BYTES": "quota",
    "FILE_RIGHTS": "landlock",
    "READ": "landlock",
    "SCRATCH_BYTES": "quota",
    "SCRATCH_FILES": "quota",
    "ScratchWatch": "quota",
    "abi_version": "landlock",
    "apply": "isolate",
    "c_library": "libc",
    "carve": "landlock",
    "level_at_least": "isolate",
    "plan": "landlock",
    "preload": "isolate",
    "program": "seccomp",
    "release_cgroup": "quota",
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
