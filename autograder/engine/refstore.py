"""The reference's answers kept on disk between runs (opt-in: ``TAPETRACE_REFERENCE_CACHE``, a folder).

A reference probe's answer depends only on what it is asked (its key, which encodes the inputs the run's seed
drew), the reference solution's file, the grader's own code, the libraries and the device. Runs that grade the same
exercises with the same seed (a class's shards and cluster tasks on one machine or filesystem, a regrade)
ask the same questions: with a store, only the first run asks the reference's worker. An answer is kept under
a key that also hashes every one of those inputs, so a changed solution, hidden check, probe, library or device
reads none of the old answers.

The folder must be the grader's own and writable by no one else (else it is not used: a student's worker that
could write there could plant answers); an answer is read back by :mod:`autograder.core.wire` (JSON with arrays
as base64: nothing read from the folder runs code), written to a temporary name and renamed (runs in parallel
share one folder). An unreadable or malformed entry is a miss.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from autograder.core import wire
from autograder.core.paths import ROOT

ENV = "TAPETRACE_REFERENCE_CACHE"
LIBRARIES = ("torch", "jax", "jaxlib", "flax", "optax", "numpy", "ml_dtypes")
# the environment variables that change what a library computes (XLA's and JAX's flags, thread pools)
_ENV_PREFIXES = ("XLA_", "JAX_", "TF_", "OMP_", "MKL_", "OPENBLAS_", "TORCH_", "CUDA_", "TPU_")
MISS = object()


def folder_from_env() -> Path | None:
    """The store's folder from ``TAPETRACE_REFERENCE_CACHE``, or None when unset or not safe to use (not a
    folder, not owned by this user, or writable by its group or others)."""
    value = os.environ.get(ENV, "")
    if not value:
        return None
    try:
        st = os.stat(value)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        return None
    return Path(value)


def _grader_code() -> str:
    """One hash of every file of the grader (``autograder/``: checks, probes, workers, data)."""
    h = hashlib.sha256()
    base = ROOT / "autograder"
    for path in sorted(base.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(str(path.relative_to(base)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _versions() -> list[str]:
    out = []
    for name in LIBRARIES:
        try:
            out.append(f"{name}={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            out.append(f"{name}=-")
    return out


class ReferenceStore:
    """Answers of reference probes in one folder, under keys salted with everything they depend on.

    Args:
        folder: the store's folder (see :func:`folder_from_env`).
        device: the run's device (:func:`autograder.core.device.resolve`): answers on one device are never read on
            another.
    """

    def __init__(self, folder: Path, device: dict[str, Any]) -> None:
        self.folder = folder
        env = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith(_ENV_PREFIXES))
        salt = [_grader_code(), json.dumps(device, sort_keys=True), sys.version, platform.machine(), *_versions(), *env]
        self._salt = hashlib.sha256("\n".join(salt).encode()).hexdigest()

    def _path(self, key: str, solution: Path) -> Path:
        source = hashlib.sha256(solution.read_bytes()).hexdigest()  # the file the reference's worker would load
        return self.folder / hashlib.sha256(f"{self._salt}:{source}:{key}".encode()).hexdigest()

    def get(self, key: str, solution: Path) -> Any:
        """The answer kept under ``key`` (a :func:`autograder.core.protocol.reference_key`) for the reference
        solution ``solution``, or :data:`MISS`."""
        try:
            data = self._path(key, solution).read_bytes()
            if len(data) < 8 or int.from_bytes(data[:8], "big") != len(data) - 8:
                return MISS  # cut short: a write that never finished its rename cannot be here, a disk can
            return wire.decode(wire.loads(data[8:]))
        except (OSError, ValueError, TypeError, KeyError, wire.WireError):
            return MISS

    def put(self, key: str, solution: Path, value: Any) -> None:
        """Keeps ``value`` (the answer of reference solution ``solution``) under ``key``; a failed write is only
        a lost saving."""
        try:
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".part-")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(wire.frame(value))
                os.replace(tmp, self._path(key, solution))
            except BaseException:
                os.unlink(tmp)
                raise
        except (OSError, ValueError, TypeError):
            pass
