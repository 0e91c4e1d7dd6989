"""Scale-out: grading more than one machine's share.

Owns shards and their merge (``shard``), the Dask cluster client (``cluster``, over its link to the scheduler
``cluster_link``, with its options ``cluster_options``) and its worker side (``cluster_worker``); the
fingerprint of the grading inputs every host must share lives with the workers
(``autograder.workers.fingerprint``). Imports the engine, the reports, the workers, the submissions and the
core; imported by the CLI only. Names are imported on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import Any

_PUBLIC: dict[str, str] = {  # name -> its module (imported on first use)
    "ClusterError": "cluster_options",
    "ClusterRun": "cluster",
    "MAX_ATTEMPTS": "cluster",
    "MAX_HIDE": "cluster",
    "PATIENCE_ENV": "cluster_options",
    "ShardError": "shard",
    "add_grade_options": "shard",
    "check_args": "cluster_options",
    "derive_seed": "shard",
    "factory": "cluster",
    "from_environment": "shard",
    "hide_list": "cluster",
    "merge": "shard",
    "note": "shard",
    "parse_spec": "shard",
    "run_settings": "shard",
    "select": "shard",
    "slice_of": "shard",
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
