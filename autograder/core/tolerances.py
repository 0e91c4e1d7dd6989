"""Tolerances per backend and per kind of check.

One float32 table serves every backend because grading pins precision
(TF32 off in torch, JAX matmuls at "highest"); accelerators get a little
more room for different reduction orders. Each entry says where it comes from.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tol:
    """Absolute and relative tolerance: ``|a - b| <= atol + rtol * |b|``."""

    atol: float
    rtol: float


# kind -> backend -> Tol
TOLERANCES: dict[str, dict[str, Tol]] = {
    # Same computation, same library, same device: only op order may differ
    # (e.g. a student sums in another order). float32 unit roundoff is 6e-8;
    # 1e-6/1e-5 leaves ~100 ulps for a handful of ops.
    "exact": {
        "cpu": Tol(1e-6, 1e-5),
        "cuda": Tol(1e-5, 1e-4),
        "gpu": Tol(1e-5, 1e-4),
        "tpu": Tol(1e-5, 1e-4),
    },
    # One forward pass. Measured here: torch vs JAX MLP forward on 10k points
    # max abs 3.8e-6 at outputs up to 23 (rel 9.5e-5); torch thread count
    # changes bits at the 1e-5 level. GPU: cuBLAS/cuDNN reduction order.
    "forward": {
        "cpu": Tol(1e-5, 1e-4),
        "cuda": Tol(5e-5, 5e-4),
        "gpu": Tol(5e-5, 5e-4),
        "tpu": Tol(1e-4, 1e-3),
    },
    # One optimizer step / one gradient. Measured: torch vs optax Adam after
    # 1 step 3.4e-7 max; gradients 1.8e-7; allow 10x headroom and the
    # thread-count effect (7.75e-6 after a full training run).
    "step": {
        "cpu": Tol(2e-5, 1e-4),
        "cuda": Tol(1e-4, 1e-3),
        "gpu": Tol(1e-4, 1e-3),
        "tpu": Tol(2e-4, 2e-3),
    },
    # A few (<= 5) steps of training. Measured: 10 Adam steps drift 1.2e-6 to
    # 9.6e-6 (outlier 3e-3 at step 6+ where a ReLU input crosses zero), so
    # only up to 5 steps are compared, on losses, with room for that.
    "steps": {
        "cpu": Tol(1e-4, 1e-3),
        "cuda": Tol(5e-4, 5e-3),
        "gpu": Tol(5e-4, 5e-3),
        "tpu": Tol(1e-3, 1e-2),
    },
}


def tolerance(kind: str, backend: str = "cpu") -> Tol:
    """Looks up the tolerance for a kind of check on a backend.

    Args:
        kind: one of ``exact``, ``forward``, ``step``, ``steps``.
        backend: ``cpu``, ``cuda`` (torch), ``gpu`` or ``tpu`` (JAX).

    Returns:
        The :class:`Tol` to use.
    """
    table = TOLERANCES[kind]
    return table.get(backend, table["cpu"])
