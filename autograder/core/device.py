"""Device choice and precision policy (GRADING.md), in one place.

``--device auto`` puts torch on CUDA when available and JAX on its default
backend; ``cpu`` forces both to CPU; ``cuda`` needs a CUDA torch; ``tpu``
needs a JAX TPU backend (torch then stays on CPU). Asking for a device that
is not there is an error, never a silent CPU run. Workers apply the
precision pins (TF32 off, JAX matmul precision "highest").
"""

from __future__ import annotations

import glob
import json
import subprocess
import sys
from pathlib import Path

PRECISION = {"torch_tf32": False, "torch_matmul_precision": "highest", "jax_matmul_precision": "highest"}
CHOICES = ("auto", "cpu", "cuda", "tpu")


class DeviceError(Exception):
    """The requested device is not available."""


def _detect() -> dict[str, str]:
    """Asks a fresh interpreter what torch and JAX see (never initialises CUDA here): the program of
    ``autograder/core/detect_devices.py``, run as ``python -c`` (no import path of ours)."""
    try:
        code = (Path(__file__).resolve().parent / "detect_devices.py").read_text(encoding="utf-8")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return {"torch": "cpu", "jax": "cpu"}


def _accelerator_present() -> bool:
    return bool(glob.glob("/dev/nvidia[0-9]*") or glob.glob("/dev/accel*") or glob.glob("/dev/vfio/[0-9]*"))


def resolve(requested: str, detect=None) -> dict[str, str]:
    """Maps ``--device`` to the devices used by torch and JAX.

    Args:
        requested: ``auto``, ``cpu``, ``cuda`` or ``tpu``.
        detect: injectable detector (tests simulate accelerators with it).

    Returns:
        ``{"torch": "cpu"|"cuda", "jax": "cpu"|"gpu"|"tpu"}``.

    Raises:
        DeviceError: the device is unknown or not present.
    """
    if requested not in CHOICES:
        raise DeviceError(f"unknown device {requested!r}; choose one of {', '.join(CHOICES)}")
    if requested == "cpu":
        return {"torch": "cpu", "jax": "cpu"}
    if detect is None:
        if requested == "auto" and not _accelerator_present():
            return {"torch": "cpu", "jax": "cpu"}
        detect = _detect
    seen = detect()
    if requested == "auto":
        return {"torch": seen.get("torch", "cpu"), "jax": seen.get("jax", "cpu")}
    if requested == "cuda":
        if seen.get("torch") != "cuda":
            raise DeviceError("--device cuda: torch sees no CUDA device here (torch.cuda.is_available() is False)")
        return {"torch": "cuda", "jax": seen.get("jax") if seen.get("jax") == "gpu" else "cpu"}
    if seen.get("jax") != "tpu":
        raise DeviceError("--device tpu: JAX sees no TPU here (jax.default_backend() is not 'tpu')")
    return {"torch": "cpu", "jax": "tpu"}


def satisfies(device: dict[str, str], needs: str) -> bool:
    """Whether a check that ``needs`` an accelerator can run on ``device``."""
    if needs == "cuda":
        return device.get("torch") == "cuda"
    if needs == "accelerator":
        return device.get("torch") == "cuda" or device.get("jax") in ("gpu", "tpu")
    return True


def describe(device: dict[str, str]) -> str:
    """``torch on cpu, jax on cpu``."""
    return f"torch on {device.get('torch', 'cpu')}, jax on {device.get('jax', 'cpu')}"
