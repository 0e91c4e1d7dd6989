"""The checks of an exercise that needs several devices, run apart where this process's JAX has fewer.

ex13's checks compare data-parallel code on meshes of 1, 2, 4 and 8 devices (``META.cpu_devices``: the grader's
workers have 8 CPU devices). On a mesh of one device, a gradient or a loss averaged per device instead of across
them, a batch replicated instead of split, or ``psum`` where ``pmean`` is meant give the right numbers: a
one-chip TPU (Colab's v5e-1), a single GPU, or a CPU session where JAX started before the set-up cell has one
device, and such code would PASS there (issue 54). So where JAX here has fewer devices than the exercise needs
(:func:`shortfall`), its public checks run in a separate Python process (:func:`run_apart`: this interpreter, this
``sys.path``, ``JAX_PLATFORMS=cpu`` and that many host CPU devices, no GPU for torch), on the student's code as
text: the exercise's graded module read from the notebook, or the ``.py`` file ``check.py`` checks
(:class:`Job`). It answers one JSON line (``MARK``); what the student's code prints there is not shown. Where it
cannot run (no source: the names were handed over; no interpreter; it failed), the caller checks here and must
not call the result a pass (``public.one_device``). The separate process itself is
:func:`autograder.builders.public.serve_apart` (it checks there, as here): this module imports nothing of
``public``, which imports it. Ships in the notebook's runtime.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

MARK = "TAPETRACE-APART="
_DEVICE_FLAG = "--xla_force_host_platform_device_count"
# The separate process: the parent's sys.path first (the runtime zip, the libraries), then the server.
_BOOT = ("import json, sys\n"
         "payload = json.loads(sys.stdin.read())\n"
         "sys.path[:] = payload['path']\n"
         "from autograder.builders.public import serve_apart\n"
         "serve_apart(payload)\n")


@dataclass(frozen=True)
class Shortfall:
    """This process's JAX has ``have`` devices of ``platform``; the exercise's checks need ``need``."""

    have: int
    platform: str
    need: int


@dataclass(frozen=True)
class Job:
    """One exercise's check, apart: the student's code as the graded module's ``source``, or a ``file``."""

    exercise: str
    source: str = ""
    file: str = ""


@dataclass
class Apart:
    """What the separate process said: one result per job (``tests``, ``device``, ``note``), or ``why`` not."""

    results: list[dict[str, Any]] = field(default_factory=list)
    why: str = ""


def shortfall(need: int) -> Shortfall | None:
    """Whether this process's JAX has fewer than ``need`` devices (starts its backend; None: enough, or no JAX).

    Args:
        need: the devices the exercise's checks use (``META.cpu_devices``; 0 or 1: none needed).
    """
    if need <= 1:
        return None
    try:
        import jax

        devices = jax.devices()
    except Exception:  # noqa: BLE001 - no JAX here: the checks report that themselves
        return None
    if len(devices) >= need:
        return None
    return Shortfall(len(devices), str(devices[0].platform) if devices else "cpu", need)


def child_env(need: int, environ: dict[str, str] | None = None) -> dict[str, str]:
    """The separate process's environment: JAX on ``need`` host CPU devices only, torch without a GPU."""
    env = dict(os.environ if environ is None else environ)
    flags = [f for f in env.get("XLA_FLAGS", "").split() if not f.startswith(_DEVICE_FLAG)]
    env["XLA_FLAGS"] = " ".join([*flags, f"{_DEVICE_FLAG}={int(need)}"])
    env["JAX_PLATFORMS"] = "cpu"  # never the TPU or GPU this session holds
    env["JAX_NUM_CPU_DEVICES"] = str(int(need))
    env["CUDA_VISIBLE_DEVICES"] = ""
    env.pop("PYTHONSTARTUP", None)
    return env


def run_apart(jobs: list[Job], *, need: int, lang: str, timeout: float, wall: float) -> Apart:
    """Runs the public checks of ``jobs`` in one separate process with ``need`` CPU devices.

    Args:
        jobs: the exercises and the student's code of each.
        need: host CPU devices the process gets.
        lang: the messages' language.
        timeout: seconds one call of the student's code may take (as in this process).
        wall: seconds the whole process may take.

    Returns:
        :class:`Apart`: one result per job, in order, or why there is none.
    """
    payload = {"path": [str(p) for p in sys.path], "jobs": [asdict(j) for j in jobs], "lang": lang,
               "timeout": timeout, "need": need}
    if not sys.executable:
        return Apart(why="no Python interpreter to start (sys.executable is empty)")
    try:
        proc = subprocess.run([sys.executable, "-c", _BOOT], input=json.dumps(payload), capture_output=True,
                              text=True, env=child_env(need), cwd=os.getcwd(), timeout=wall)
    except subprocess.TimeoutExpired:
        return Apart(why=f"it ran over {wall:g} s")
    except (OSError, ValueError) as err:
        return Apart(why=f"{type(err).__name__}: {err}")
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(MARK):
            try:
                said = json.loads(line[len(MARK):])
            except ValueError:
                break
            results = said.get("results")
            if isinstance(results, list) and len(results) == len(jobs):
                return Apart(results=results)
            return Apart(why=str(said.get("why") or "no result"))
    last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
    return Apart(why=last[:300])
