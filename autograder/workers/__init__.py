"""Both sides: the package of the processes that run a student's code (and the reference's) beside the probes.

Grader side and worker side alike: importing it runs no code of either (``__getattr__`` imports a name's module on
first use); which module runs where is listed in ``autograder/workers/README.md`` ("Two sides").

Owns launching them (``launch``), the environment they start with (``environment``), the grader's handle on a
started one (``handle``), the zygote that forks them warm (``zygote``) and what it warms (``warmup``), the
worker's own loop (``worker``: runs probes, never verdicts), the compile caches (``compile_cache``,
``jaxtune``), reading what a worker sends (``intake``), watching it (``watch``), its resource envelope
(``envelope``), the plan a run grades by in it (``sizing``) and the guard of the grader's own code inside it
(``guard``). Imports the sandbox, the submissions, probing and the core; imported by the engine, the builders
and the scale-out. Ships to students in part (``worker``). Names are imported on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import Any

_PUBLIC: dict[str, str] = {  # name -> its module (imported on first use)
    "ANSWER": "compile_cache",
    "BASE_BYTES": "sizing",
    "Borrower": "compile_cache",
    "Budget": "watch",
    "CPUS_ENV": "environment",
    "CPU_COMPILE_FLAGS": "environment",
    "DEFAULT_WORKER_BYTES": "sizing",
    "Envelope": "envelope",
    "GIB": "envelope",
    "LOWERINGS_PER_CONTEXT": "jaxtune",
    "Lender": "compile_cache",
    "MAX_JOBS": "sizing",
    "MIB": "envelope",
    "MIN_WORKER_BYTES": "sizing",
    "PRELOAD": "warmup",
    "Proc": "launch",
    "REFERENCE_BYTES": "sizing",
    "REQUEST": "compile_cache",
    "STACK_BYTES": "sizing",
    "SpawnLauncher": "launch",
    "Worker": "handle",
    "WorkerDied": "handle",
    "ZygoteLauncher": "launch",
    "ZygotePair": "launch",
    "as_json": "sizing",
    "as_record": "envelope",
    "close_all": "handle",
    "current": "envelope",
    "is_request": "compile_cache",
    "is_stub_raise": "worker",
    "judge_kill": "envelope",
    "load_error": "worker",
    "memory_in_use": "envelope",
    "oom_kills": "envelope",
    "plan": "sizing",
    "private_memory": "zygote",
    "read": "envelope",
    "response": "intake",
    "reuse_mlir_contexts": "jaxtune",
    "status": "intake",
    "tree": "watch",
    "watching": "watch",
    "worker_env": "environment",
    "worker_main": "worker",
    "working": "watch",
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
