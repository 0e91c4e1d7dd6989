"""JAX's CPU devices in the student notebook: exercise 13 checks meshes of 1, 2, 4 and 8 devices.

The set-up cell calls :func:`ensure_host_devices` before anything has started JAX: JAX then
starts with 8 CPU devices (``XLA_FLAGS=--xla_force_host_platform_device_count``, or the
``jax_num_cpu_devices`` option when JAX is imported but its backend has not started). Once a
backend runs, the number of devices is fixed: ex13's checks then use the sizes there are and say
why (see ``autograder/exercises/ex13_spmd/probes.py``). On a GPU or TPU runtime JAX's default devices are
the accelerators; the CPU count changes nothing there.
"""

from __future__ import annotations

import os
import sys

HOST_DEVICES = 8
_FLAG = "--xla_force_host_platform_device_count"


def ensure_host_devices(n: int = HOST_DEVICES) -> bool:
    """Asks JAX for ``n`` CPU devices if it has not started yet.

    Args:
        n: the number of CPU devices.

    Returns:
        Whether the request can still take effect (False: a JAX backend already runs).
    """
    jax = sys.modules.get("jax")
    if jax is None:
        flags = os.environ.get("XLA_FLAGS", "")
        if _FLAG not in flags:
            os.environ["XLA_FLAGS"] = f"{flags} {_FLAG}={int(n)}".strip()
        return True
    try:
        jax.config.update("jax_num_cpu_devices", int(n))
    except Exception:  # noqa: BLE001 - a backend already started (RuntimeError), or an older JAX
        return False
    return True
