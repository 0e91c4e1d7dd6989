"""Probing: what runs beside the student's code in a worker to measure it (never to judge it).

Owns the probes' tools (``tools``: ``get``, ``ProbeFail``, converters), the families of valid code
(``families``, ``optax_family``, ``torch_family``), the observers of a run (``observe``) and the artefact
readers (``artefact``). Imports the core only; imported by the exercises' probes, the hidden suites and
the workers. Names are imported on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import Any

_PUBLIC: dict[str, str] = {  # name -> its module (imported on first use)
    "DEVICE": "tools",
    "FAST_RUN": "tools",
    "ProbeFail": "tools",
    "Program": "artefact",
    "ProgramTooLarge": "artefact",
    "StepRecorder": "torch_family",
    "compiled_once_per_shape": "observe",
    "get": "tools",
    "init_state": "optax_family",
    "jax_converter": "tools",
    "jax_to_np": "tools",
    "optax_label": "families",
    "optax_needing_params": "families",
    "optax_optimizer": "optax_family",
    "programs": "observe",
    "put_gradients": "torch_family",
    "read_stablehlo": "artefact",
    "run_without_params_check": "optax_family",
    "to_float": "tools",
    "torch_label": "families",
    "torch_optimizer": "torch_family",
    "torch_optimizers": "families",
    "torch_to_np": "tools",
    "tree_to_np": "tools",
    "type_name": "tools",
    "walk_jaxpr": "tools",
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
