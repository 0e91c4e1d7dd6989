"""What ``--cluster`` and ``--scheduler`` accept, checked before grading: the spec, Dask's presence, the patience.

``--cluster local:N`` starts a ``LocalCluster`` of N processes; ``--scheduler ADDRESS`` (or a scheduler
file) uses a running one. Dask (``pip install 'tapetrace[cluster]'``) is looked for, never imported, here.
How long a run waits without an admitted worker comes from :data:`PATIENCE_ENV`.
"""

from __future__ import annotations

import importlib.util
import os
import re

EXTRA = "pip install 'tapetrace[cluster]'"
_SPEC = re.compile(r"^local:(\d+)$")
PATIENCE_ENV = "TAPETRACE_CLUSTER_PATIENCE"
DEFAULT_PATIENCE = 600.0  # seconds without an admitted (or still examined) worker before the rest is ungraded


class ClusterError(RuntimeError):
    """The cluster cannot be used (Dask missing, bad ``--cluster``, unreachable scheduler)."""


def parse_cluster(spec: str) -> int:
    """``"local:N"`` -> N (worker processes).

    Raises:
        ClusterError: anything else.
    """
    m = _SPEC.match(spec.strip())
    if not m or int(m.group(1)) < 1:
        raise ClusterError(f"--cluster {spec!r}: expected local:N with N >= 1 worker processes "
                           "(for a cluster elsewhere, start it and pass --scheduler ADDRESS)")
    return int(m.group(1))


def check_args(cluster: str | None, scheduler: str | None) -> str | None:
    """Why ``--cluster``/``--scheduler`` cannot be used here, or None (checked before grading)."""
    if cluster is None and scheduler is None:
        return None
    if cluster is not None:
        try:
            parse_cluster(cluster)
        except ClusterError as err:
            return str(err)
    if scheduler is not None and not scheduler.strip():
        return "--scheduler: empty address"
    if importlib.util.find_spec("distributed") is None:
        flag = "--cluster" if cluster is not None else "--scheduler"
        return f"{flag} needs Dask distributed, which is not installed: {EXTRA}"
    return None


def patience_from_env() -> float:
    """:data:`PATIENCE_ENV` in seconds (:data:`DEFAULT_PATIENCE` when unset or not a positive number)."""
    try:
        value = float(os.environ.get(PATIENCE_ENV, ""))
    except ValueError:
        return DEFAULT_PATIENCE
    return value if value > 0 else DEFAULT_PATIENCE
