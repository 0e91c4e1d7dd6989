"""What decides an exercise's verdicts: a fingerprint recorded per exercise in every result.

An exercise's checks pass or fail because of its hidden suite, its public checks, its probes, its
reference solution, the tolerance table, the engine (the grading modules and the numerical
libraries' versions), the datasets, the device and the seed. :func:`parts` names each of them (a file
by its SHA-256, the device and seed as they are); :func:`stamp` adds ``fingerprint`` (``{"digest":
..., "parts": {...}}``) to each exercise of a result row. ``tapetrace regrade`` (autograder/engine/regrade.py)
compares an earlier row's parts with this install's and grades again only the exercises whose parts
moved, and :func:`changed` says which moved, in words (``suite changed``, ``device differs``).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
from pathlib import Path
from typing import Any

from autograder.core.paths import ROOT, SOLUTIONS
from autograder.core.records import ResultRow

PKG = ROOT / "autograder"

# The parts of a fingerprint, in the words a regrade's diff uses when one of them moved.
WORDS: dict[str, str] = {
    "suite": "suite changed",
    "public": "public checks changed",
    "probes": "probes changed",
    "contract": "contract changed",
    "reference": "reference changed",
    "tolerances": "tolerances changed",
    "engine": "engine changed",
    "data": "datasets changed",
    "device": "device differs",
    "seed": "seed differs",
    "public_only": "public-only differs",
}

# Subpackages of the package that are not the engine: the per-exercise parts and the datasets have their own
# entries, the messages change words (not verdicts); the commands, reports and after-grading tools, the
# builders (notebook, otter zip, the students' runtime) and the command-line entry never decide a verdict.
_NOT_ENGINE_DIRS = ("hidden", "exercises", "messages", "data", "cli", "reports", "builders")
# Modules of the engine's folders with a part of their own (tolerances) or that only compute this fingerprint.
_NOT_ENGINE_FILES = ("core/tolerances.py", "core/verdict_fp.py", "engine/regrade.py")
# The tolerance table (its own part: ``tolerances changed``).
TOLERANCES = Path("core") / "tolerances.py"
# The numerical libraries whose versions decide verdicts.
_LIBRARIES = ("numpy", "torch", "jax", "jaxlib", "flax", "optax", "tapetrace")


def _sha(paths: list[Path], base: Path | None = None) -> str:
    """SHA-256 over files (their paths relative to ``base``, else their names, and their bytes); ``absent`` for none."""
    h = hashlib.sha256()
    found = False
    for p in sorted(paths):
        try:
            data = p.read_bytes()
        except OSError:
            continue
        found = True
        name = p.relative_to(base).as_posix() if base is not None else p.name
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()[:16] if found else "absent"


def _version(lib: str) -> str:
    try:
        return importlib.metadata.version(lib)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def engine_files(root: Path | None = None) -> list[Path]:
    """The engine's modules under the package folder ``root`` (default the installed one): those whose
    bytes decide verdicts, without the commands, reports, builders and the parts of their own."""
    pkg = root or PKG
    return [p for p in pkg.rglob("*.py") if p.relative_to(pkg).parts[0] not in _NOT_ENGINE_DIRS
            and p.relative_to(pkg).as_posix() not in _NOT_ENGINE_FILES]


@functools.lru_cache(maxsize=4)
def engine_part(root: Path | None = None) -> str:
    """The engine's part: the engine's modules' paths and bytes and the numerical libraries' versions (cached)."""
    pkg = root or PKG
    versions = ",".join(f"{lib}={_version(lib)}" for lib in _LIBRARIES)
    return hashlib.sha256((_sha(engine_files(pkg), base=pkg) + versions).encode()).hexdigest()[:16]


def file_parts(exercise: str, root: Path | None = None, solutions: Path | None = None) -> dict[str, str]:
    """The parts read from files: suite, public checks, probes, contract, reference, tolerances, engine, data.

    Args:
        exercise: e.g. ``"ex01_torch_mlp"``.
        root: the package folder (tests pass a copy); default the installed one.
        solutions: the reference solutions' folder; default the installed one.

    Returns:
        ``{"suite": "<sha>", "public": ..., "probes": ..., "contract": ..., "reference": ..., "tolerances": ...,
        "engine": ..., "data": ...}``.
    """
    pkg = root or PKG
    sol = solutions or SOLUTIONS
    own = pkg / "exercises" / exercise
    return {
        "suite": _sha([pkg / "hidden" / f"{exercise}.py"]),
        "public": _sha([own / "public.py"]),
        "probes": _sha([own / "probes.py"]),
        "contract": _sha([own / "__init__.py"]),
        "reference": _sha([sol / f"{exercise}.py"]),
        "tolerances": _sha([pkg / TOLERANCES]),
        "engine": engine_part(root),
        "data": _sha(sorted((pkg / "data").glob("*.npz"))),
    }


def device_words(device: dict[str, Any] | None) -> str:
    """``"torch cpu, jax cpu"`` from a row's ``device``."""
    d = device or {}
    return f"torch {d.get('torch', '?')}, jax {d.get('jax', '?')}"


def parts(exercise: str, device: dict[str, Any] | None, seed: Any, public_only: bool = False) -> dict[str, Any]:
    """Every part of an exercise's fingerprint for a run on ``device`` with ``seed``."""
    return {**file_parts(exercise), "device": device_words(device), "seed": seed, "public_only": bool(public_only)}


def digest(p: dict[str, Any]) -> str:
    """The one string two equal fingerprints share."""
    return hashlib.sha256(json.dumps(p, sort_keys=True, default=str).encode()).hexdigest()[:16]


def make(exercise: str, device: dict[str, Any] | None, seed: Any, public_only: bool = False) -> dict[str, Any]:
    """``{"digest": ..., "parts": ...}`` for one exercise."""
    p = parts(exercise, device, seed, public_only)
    return {"digest": digest(p), "parts": p}


def stamp(row: ResultRow, public_only: bool = False) -> None:
    """Adds ``fingerprint`` to each exercise of a result row (its device and seed are the row's)."""
    for ex, e in row.get("exercises", {}).items():
        if isinstance(e, dict):
            e["fingerprint"] = make(ex, row.get("device"), row.get("seed"), public_only)


def changed(old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    """Which parts moved between two fingerprints, in words (``["suite changed", "device differs"]``).

    An earlier row without a fingerprint (graded before fingerprints were recorded) has moved in every
    part as far as anyone can tell: ``["no fingerprint before"]``.
    """
    if not old or not isinstance(old.get("parts"), dict):
        return ["no fingerprint before"]
    before = old["parts"]
    return [WORDS.get(k, f"{k} changed") for k in new["parts"] if before.get(k) != new["parts"][k]]
