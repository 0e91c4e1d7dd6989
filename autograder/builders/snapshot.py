"""The reference snapshot the notebook's self-check compares with: the reference's probe results on the
public checks' inputs (fixed public seed), recomputed only when its inputs changed (:func:`snapshot_digest`).
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from typing import Any

import numpy as np

from autograder.builders.runtime import EXERCISE_PACKAGES, PKG, BuildError, exercise_dir
from autograder.core import wire as _wire
from autograder.core.exercise import part
from autograder.core.paths import ROOT, SOLUTIONS

PUBLIC_SEED = 20260101


SNAPSHOT_ARC = "autograder/_snapshot.json"


SNAPSHOT_FORMAT = 1


# What the reference snapshot's keys and values depend on, beyond each exercise's solution, probes and
# public checks (and the hidden suite's total). Verdict code (compare, tolerances, public) does not.
SNAPSHOT_INPUTS = ("core/protocol.py", "core/suite.py", "core/wire.py", "core/data.py", "probing/tools.py",
                   "data/datasets.npz")


def public_checks(exercise: str) -> list[Any]:
    """The public checks of an exercise, validated against the hidden suite."""
    from autograder.hidden import load_suite

    suite = part(exercise, "public").suite
    checks = list(suite.checks)
    if not checks:
        raise BuildError(f"{exercise}: autograder/{EXERCISE_PACKAGES}/{exercise}/public.py has no checks")
    hidden_names = [c.name for c in load_suite(exercise).checks]
    for c in checks:
        if c.hidden:
            raise BuildError(f"{exercise}: public check {c.name} is registered with hidden=True")
        if c.needs:
            raise BuildError(f"{exercise}: public check {c.name} needs {c.needs}; public checks run on any device")
        if c.name not in hidden_names:
            raise BuildError(f"{exercise}: public check {c.name} is not in the hidden suite "
                             "(start it with the public checks)")
    return checks


def _totals(exercises: list[str]) -> dict[str, dict[str, Any]]:
    from autograder.hidden import load_suite

    out = {}
    for ex in exercises:
        checks = public_checks(ex)
        out[ex] = {"checks": [c.name for c in checks], "public_points": float(sum(c.points for c in checks)),
                   "total_points": float(load_suite(ex).max_score)}
    return out


def snapshot_digest(exercises: list[str], seed: int) -> str:
    """Hash of everything the snapshot depends on."""
    h = hashlib.sha256(json.dumps({"format": SNAPSHOT_FORMAT, "seed": seed, "exercises": exercises,
                                   "totals": _totals(exercises)}, sort_keys=True).encode())
    paths = [PKG / n for n in SNAPSHOT_INPUTS]
    for ex in exercises:
        paths += [SOLUTIONS / f"{ex}.py", exercise_dir(ex) / "__init__.py", exercise_dir(ex) / "probes.py",
                  exercise_dir(ex) / "public.py"]
    for p in paths:
        h.update(str(p.relative_to(ROOT)).encode() + b"\0" + hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


# --------------------------------------------------------------------------- the snapshot
def _nudge(tree: Any) -> Any:
    """The tree with every float moved by one ulp: a correct implementation on another device."""
    if isinstance(tree, dict):
        return {k: _nudge(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_nudge(v) for v in tree)
    if isinstance(tree, np.ndarray) and tree.dtype.kind == "f":
        return np.nextafter(tree, np.inf).astype(tree.dtype)
    if isinstance(tree, float) and math.isfinite(tree):
        return math.nextafter(tree, math.inf)
    return tree


def compute_snapshot(exercises: list[str], seed: int, timeout: float = 120.0, log: Any = None) -> dict[str, Any]:
    """Runs the public checks with the reference as the student and records the reference's values.

    Then replays them as the notebook does (reference from the snapshot, student = reference moved
    by one ulp): a check whose reference inputs depend on the student's outputs, or whose comparison
    is stricter than any device allows, fails the build instead of failing students.
    """
    from autograder.builders import public as _public
    from autograder.builders import public_snapshot as _public_snapshot
    from autograder.core.protocol import reference_key
    from autograder.engine.run import GradingRun

    cpu = {"torch": "cpu", "jax": "cpu"}
    run = GradingRun(device="cpu", timeout=timeout, seed=seed)
    values: dict[str, Any] = {}
    try:
        for ex in exercises:
            checks = public_checks(ex)

            def student(probe: str, call: str, scale: float, kwargs: dict[str, Any], _ex: str = ex) -> Any:
                return run.reference.call(_ex, probe, kwargs)

            def reference(probe: str, kwargs: dict[str, Any], _ex: str = ex) -> Any:
                value = run.reference.call(_ex, probe, kwargs)
                values[reference_key(_ex, probe, kwargs)] = _wire.encode(value)
                return value

            tests = _public.run_checks(ex, checks, student=student, reference=reference, seed=seed, device=cpu)
            for t in tests:
                if not t["passed"]:
                    raise BuildError(f"{ex}: public check {t['name']} fails on the reference solution: {t['message']}")

            def nudged(probe: str, call: str, scale: float, kwargs: dict[str, Any], _ex: str = ex) -> Any:
                return _nudge(run.reference.call(_ex, probe, kwargs))

            replay = _public.run_checks(ex, checks, student=nudged,
                                        reference=_public_snapshot.snapshot_reference(ex, values), seed=seed, device=cpu)
            for t in replay:
                if not t["passed"]:
                    raise BuildError(f"{ex}: public check {t['name']} fails when replayed from the snapshot with "
                                     f"the reference moved by one ulp ({t['message']}): its reference inputs must "
                                     "come from ctx.rng only and its comparison must allow device round-off")
            if log:
                log(f"  snapshot {ex}: {len(checks)} public checks")
    finally:
        run.close()
    import jax
    import torch

    return {
        "format": SNAPSHOT_FORMAT, "seed": seed, "digest": snapshot_digest(exercises, seed),
        "exercises": _totals(exercises), "values": values,
        "built_with": {"device": "cpu", "numpy": np.__version__, "torch": torch.__version__,
                       "jax": jax.__version__, "python": sys.version.split()[0]},
    }


def snapshot_bytes(snap: dict[str, Any]) -> bytes:
    """The snapshot as stored in the runtime zip."""
    return (json.dumps(snap, sort_keys=True, separators=(",", ":")) + "\n").encode()
