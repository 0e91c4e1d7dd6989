"""The reference's answers kept on disk between runs: on by default (``TAPETRACE_REFERENCE_CACHE``).

A reference probe's answer depends only on what it is asked (its key, which encodes the inputs the run's seed
drew), the reference solution's file, the grader's own code, the libraries and the device. Runs that grade the same
exercises with the same seed (a late submission graded alone, a regrade, a class's shards and cluster tasks on one
machine or filesystem) ask the same questions: with the store, only the first run asks the reference's worker. An
answer is kept under a key that also hashes every one of those inputs, so a changed solution, hidden check, probe,
library, flag or device reads none of the old answers (a stale store is a miss, never an answer).

Where: ``~/.cache/tapetrace/reference`` (beside the JAX compilation cache, outside /tmp on purpose); ``TAPETRACE_REFERENCE_CACHE=DIR``
elsewhere, ``=off`` for none. The answers are expected values, as private as the hidden suites: the folder must be
the grader's own, 0700 and writable by no one else (else it is not used), and every student worker is kept from it
(the run adds it to what its sandbox hides, :attr:`ReferenceStore.folder`). An entry is read back only when whole
and authentic: a length, then an HMAC-SHA256 of its name and payload under the store's own key (``.key``, 0600,
made once), then the payload, read by :mod:`autograder.core.wire` (JSON with arrays as base64: nothing read from
the folder runs code). A truncated, altered, renamed or planted entry is a miss. Written to a temporary name and
renamed (runs in parallel share one folder); kept under :data:`STORE_MAX_BYTES` (oldest first).
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.metadata
import json
import os
import platform
import secrets
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from autograder.core import wire
from autograder.core.paths import ROOT
from autograder.engine.jaxcache import prune

ENV = "TAPETRACE_REFERENCE_CACHE"
LIBRARIES = ("torch", "jax", "jaxlib", "flax", "optax", "numpy", "ml_dtypes")
# the environment variables that change what a library computes (XLA's and JAX's flags, thread pools)
_ENV_PREFIXES = ("XLA_", "JAX_", "TF_", "OMP_", "MKL_", "OPENBLAS_", "TORCH_", "CUDA_", "TPU_")
MISS = object()
KEY_FILE = ".key"
_MAC = 32  # bytes of an entry's HMAC-SHA256
STORE_MAX_BYTES = 256 << 20  # pruned (oldest first) to half of this when a store is opened above it


def default_folder() -> Path:
    """Where the store lives unless ``TAPETRACE_REFERENCE_CACHE`` says otherwise."""
    return Path(os.path.expanduser("~")) / ".cache" / "tapetrace" / "reference"


def _safe(path: Path, kind: int) -> bool:
    """Whether ``path`` (not a link) is of ``kind`` (``stat.S_IFDIR``...), this user's, writable by no one else."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_IFMT(st.st_mode) == kind and st.st_uid == os.getuid() and not st.st_mode & 0o022


def folder_from_env() -> Path | None:
    """The store's folder: ``TAPETRACE_REFERENCE_CACHE`` (``off``: none), else :func:`default_folder`, made
    0700 where it is missing; None where it is not safe to use (not a folder, a link, not this user's, or
    writable by its group or others)."""
    value = os.environ.get(ENV, "")
    if value == "off":
        return None
    folder = Path(value) if value else default_folder()
    if not value:
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            return None
    return folder if _safe(folder, stat.S_IFDIR) else None


def _key_of(folder: Path) -> bytes | None:
    """The store's MAC key (``.key``: 32 random bytes, 0600, this user's), made on first use; None where it
    cannot be read or made safely."""
    path = folder / KEY_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        pass
    except OSError:
        return None
    else:
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
    if not _safe(path, stat.S_IFREG):
        return None
    try:
        key = path.read_bytes()
    except OSError:
        return None
    return key if len(key) == 32 else None


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
        key: the store's MAC key (see :func:`open_store`).
    """

    def __init__(self, folder: Path, device: dict[str, Any], key: bytes) -> None:
        self.folder = folder
        self._key = key
        env = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith(_ENV_PREFIXES))
        salt = [_grader_code(), json.dumps(device, sort_keys=True), sys.version, platform.machine(), *_versions(), *env]
        self._salt = hashlib.sha256("\n".join(salt).encode()).hexdigest()
        self._sources: dict[Path, str] = {}

    def _name(self, key: str, solution: Path) -> str:
        if solution not in self._sources:  # the file the reference's worker would load (read once a store)
            self._sources[solution] = hashlib.sha256(solution.read_bytes()).hexdigest()
        return hashlib.sha256(f"{self._salt}:{self._sources[solution]}:{key}".encode()).hexdigest()

    def _mac(self, name: str, payload: bytes) -> bytes:
        return hmac.new(self._key, name.encode() + b"\0" + payload, hashlib.sha256).digest()

    def get(self, key: str, solution: Path) -> Any:
        """The answer kept under ``key`` (a :func:`autograder.core.protocol.reference_key`) for the reference
        solution ``solution``, or :data:`MISS` (none, or one cut short, altered, renamed or planted)."""
        try:
            name = self._name(key, solution)
            with open(self.folder / name, "rb", opener=_no_follow) as fh:
                data = fh.read()
            if len(data) < 8 + _MAC or int.from_bytes(data[:8], "big") != len(data) - 8 - _MAC:
                return MISS  # cut short: a write that never finished its rename cannot be here, a disk can
            payload = data[8 + _MAC:]
            if not hmac.compare_digest(data[8:8 + _MAC], self._mac(name, payload)):
                return MISS  # not written by this store under this name
            return wire.decode(wire.loads(payload))
        except (OSError, ValueError, TypeError, KeyError, wire.WireError):
            return MISS

    def put(self, key: str, solution: Path, value: Any) -> None:
        """Keeps ``value`` (the answer of reference solution ``solution``) under ``key``; a failed write is only
        a lost saving."""
        try:
            name = self._name(key, solution)
            payload = wire.frame(value)[8:]
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".part-")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(len(payload).to_bytes(8, "big") + self._mac(name, payload) + payload)
                os.replace(tmp, self.folder / name)
            except BaseException:
                os.unlink(tmp)
                raise
        except (OSError, ValueError, TypeError):
            pass


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW)


def open_store(device: dict[str, Any]) -> ReferenceStore | None:
    """The run's store (:func:`folder_from_env`, its key, pruned), or None: switched off, or not safe to use."""
    folder = folder_from_env()
    key = _key_of(folder) if folder is not None else None
    if folder is None or key is None:
        return None
    try:  # the entries written longest ago go first
        prune(str(folder), STORE_MAX_BYTES, keep=(KEY_FILE,))
    except OSError:
        return None
    return ReferenceStore(folder, device, key)
