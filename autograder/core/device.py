"""Device choice and precision policy (docs/devices-and-tolerances.md), in one place.

``--device auto`` puts torch on CUDA when available and JAX on its default backend, but not on a TPU (below);
``cpu`` forces both to CPU; ``cuda`` needs a CUDA torch; ``tpu`` puts JAX on the host's TPU (torch has none: it
stays on the CPU). Asking for a device that is not there is an error, never a silent CPU run. Workers apply the
precision pins (TF32 off, JAX matmul precision "highest").

A TPU chip is held by one process at a time (libtpu's lock; a second process fails at once), and opening it costs
7-10 s a process (measured on a TPU v5e host, JAX 0.10.2). A ``tpu`` run therefore leases the chip to one worker at
a time (:mod:`autograder.engine.chip`): the reference's answers first, then each student's worker in turn, while
the exercises that use torch only, or JAX on several host CPU devices (ex13's meshes: :func:`for_exercise`), are
graded beside it. ``auto`` keeps JAX on the CPU of a TPU host, with a note: on the 13 cores such a host has, grading
in parallel on the CPU is faster than one chip opened and closed for every exercise of every submission.
"""

from __future__ import annotations

import glob
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

PRECISION: dict[str, str | bool] = {"torch_tf32": False, "torch_matmul_precision": "highest", "jax_matmul_precision": "highest"}
CHOICES = ("auto", "cpu", "cuda", "tpu")
# tests only (CI has no TPU): a file a `--device tpu` worker locks (flock, exclusive, not waiting) instead of opening a
# chip, so that two workers holding "the chip" at once fail as libtpu's lock makes them fail; set by the grader's own
# environment, which its workers inherit (a student's code runs after the chip is opened, and cannot set it)
TEST_CHIP_ENV = "TAPETRACE_TEST_CHIP"


class DeviceError(Exception):
    """The requested device is not available."""


TPU_AUTO = ("`--device tpu` grades JAX on the chip, leased to one worker at a time (a chip open costs 7-10 s a "
            "worker); on the CPU the exercises are graded in parallel, which is faster for a class")


def _detect() -> dict[str, str]:
    """Asks a fresh interpreter what torch and JAX see (never initialises CUDA here): the program of
    ``autograder/core/detect_devices.py``, run as ``python -c`` (no import path of ours)."""
    try:
        code = (Path(__file__).resolve().parent / "detect_devices.py").read_text(encoding="utf-8")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        seen: dict[str, str] = json.loads(done.stdout.strip().splitlines()[-1])  # what detect_devices.py prints
        return seen
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return {"torch": "cpu", "jax": "cpu"}


def _accelerator_present() -> bool:
    return bool(glob.glob("/dev/nvidia[0-9]*") or glob.glob("/dev/accel*") or glob.glob("/dev/vfio/[0-9]*"))


def resolve(requested: str, detect: Callable[[], dict[str, str]] | None = None,
            notes: list[str] | None = None) -> dict[str, str]:
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
                notes.append(f"JAX is graded on the CPU, not this host's TPU: {TPU_AUTO}")
            jax = "cpu"
        return {"torch": seen.get("torch", "cpu"), "jax": jax}
    if requested == "cuda":
        if seen.get("torch") != "cuda":
            raise DeviceError("--device cuda: torch sees no CUDA device here (torch.cuda.is_available() is False)")
        return {"torch": "cuda", "jax": "gpu" if seen.get("jax") == "gpu" else "cpu"}
    if seen.get("jax") != "tpu":
        raise DeviceError("--device tpu: JAX sees no TPU here (jax.default_backend() is not 'tpu')")
    return {"torch": "cpu", "jax": "tpu"}


def for_exercise(device: dict[str, str], cpu_devices: int | None) -> dict[str, str]:
    """The devices one exercise is graded on: the run's, but JAX on the CPU where the exercise needs several
    host CPU devices (``META.cpu_devices``, ex13's meshes of 1, 2, 4 and 8) and the run's JAX is on a TPU, whose
    one chip cannot give them.

    Args:
        device: the run's resolved device (:func:`resolve`).
        cpu_devices: the exercise's ``META.cpu_devices`` (None or 1: none needed).

    Returns:
        ``device`` itself, or a copy with ``"jax": "cpu"``.
    """
    if device.get("jax") == "tpu" and (cpu_devices or 0) > 1:
        return {**device, "jax": "cpu"}
    return device


def on_chip(device: dict[str, str], needs: str) -> bool:
    """Whether a worker on ``device`` (an exercise's, :func:`for_exercise`) that imports ``needs`` (``torch``,
    ``jax`` or ``both``) opens a TPU chip, held by one process at a time."""
    return device.get("jax") == "tpu" and needs != "torch"


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
