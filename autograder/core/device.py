"""Device choice and precision policy (GRADING.md), in one place.

``--device auto`` puts torch on CUDA when available and JAX on its default
backend, but never on a TPU (below); ``cpu`` forces both to CPU; ``cuda`` needs
a CUDA torch; ``tpu`` is refused. Asking for a device that is not there is an
error, never a silent CPU run. Workers apply the precision pins (TF32 off, JAX
matmul precision "highest").

A TPU chip is held by one process at a time (libtpu's lock), and a grading run
compares each submission with the reference in processes of their own, side by
side: measured on a TPU v5e host, the first worker to touch JAX took the chip
and every other stopped in the student's call with "The TPU is already in use",
which graded correct solutions 0. So a grading run keeps JAX on the CPU there
(``auto`` says so in a note; ``tpu`` is an error that says why). Students'
self-checks in the notebook run in one process, on the TPU.
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


TPU_HELD = ("a TPU chip is held by one process at a time, and a grading run compares each submission with the "
            "reference in processes of their own, side by side: all but the first would fail to open it")


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


def resolve(requested: str, detect=None, notes: list[str] | None = None) -> dict[str, str]:
    """Maps ``--device`` to the devices used by torch and JAX.

    Args:
        requested: ``auto``, ``cpu``, ``cuda`` or ``tpu``.
        detect: injectable detector (tests simulate accelerators with it).
        notes: where a line for the instructor goes when ``auto`` chose other than the default backend
            (JAX kept on the CPU on a TPU host).

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
        jax = seen.get("jax", "cpu")
        if jax == "tpu":
            if notes is not None:
                notes.append(f"JAX is graded on the CPU, not this host's TPU: {TPU_HELD}")
            jax = "cpu"
        return {"torch": seen.get("torch", "cpu"), "jax": jax}
    if requested == "cuda":
        if seen.get("torch") != "cuda":
            raise DeviceError("--device cuda: torch sees no CUDA device here (torch.cuda.is_available() is False)")
        return {"torch": "cuda", "jax": seen.get("jax") if seen.get("jax") == "gpu" else "cpu"}
    if seen.get("jax") != "tpu":
        raise DeviceError("--device tpu: JAX sees no TPU here (jax.default_backend() is not 'tpu')")
    raise DeviceError(f"--device tpu: {TPU_HELD}; grade with --device auto or cpu (JAX on the CPU; torch has no "
                      "TPU either). Students' self-checks in the notebook do run on the TPU, in one process")


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
