"""Grader side: what a grading install is: the fingerprint a Dask worker must share with its client to grade.

A verdict depends on the engine, the hidden suites, the reference solutions, the probes, the
tolerances, the datasets and the versions of the numerical libraries. :func:`fingerprint` names each
of them (every file of the ``autograder`` package and of ``solutions/`` by its SHA-256, each library
by its installed version, Python by ``major.minor``); :func:`differences` says, in words an
instructor can act on, where two fingerprints part. :func:`missing_files` and :class:`ImportCheck`
(an import, in a fresh process set up as a grading worker is, of what grading needs) catch a library
whose metadata is installed but which does not import (a folder hidden by a mount, a broken wheel),
before a student's code would crash on it. A Dask worker's admission asks :class:`ImportCheck` only where its
run has no zygote (spawned workers): the zygotes import the same modules in fresh processes set up the same
way and report each that failed (``_launch.ZygoteLauncher.imports``), so a second import of it all would
add nothing but ~5 CPU-s (``autograder.scaleout.cluster_worker``).

``python -m autograder.workers.fingerprint MODULE...`` prints the import problems of this install as JSON
(the process :class:`ImportCheck` runs).
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

from autograder.core.paths import ROOT, SOLUTIONS

# The distributions whose versions decide verdicts (the numerical stack, and this package's own version).
LIBRARIES = ("numpy", "torch", "jax", "jaxlib", "flax", "optax", "tapetrace")
# Never part of an install's identity: caches Python or tools write beside the sources.
_SKIP_DIRS = {"__pycache__", ".pytest_cache", ".ruff_cache"}
_SKIP_SUFFIXES = (".pyc", ".pyo")
IMPORT_CHECK_TIMEOUT = 600.0  # a hang guard only: the imports take seconds


def _trees() -> list[tuple[str, Path]]:
    return [("autograder", ROOT / "autograder"), ("solutions", SOLUTIONS)]


def file_hashes() -> dict[str, str]:
    """SHA-256 of every file of the package and of the reference solutions, by path under the install.

    Returns:
        ``{"autograder/hidden/ex01_torch_mlp.py": "<hex>", "solutions/ex01_torch_mlp.py": ..., ...}``.
    """
    out: dict[str, str] = {}
    for name, top in _trees():
        if not top.is_dir():
            continue
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
            for f in sorted(files):
                if f.endswith(_SKIP_SUFFIXES) or f.startswith(".") or f.endswith("~"):
                    continue  # caches, editors' swap and backup files: not what an install is
                path = Path(folder) / f
                rel = f"{name}/{path.relative_to(top).as_posix()}"
                try:
                    out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
                except OSError as err:
                    out[rel] = f"unreadable ({type(err).__name__})"
    return out


def library_versions() -> dict[str, str]:
    """The installed version of each of :data:`LIBRARIES` (``"absent"`` where it is not installed)."""
    out = {}
    for lib in LIBRARIES:
        try:
            out[lib] = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            out[lib] = "absent"
    return out


def fingerprint() -> dict[str, str]:
    """This install's fingerprint: ``{"python": "3.11", "library torch": "2.5.1", "<file>": "<sha256>", ...}``."""
    out = {"python": f"{sys.version_info.major}.{sys.version_info.minor}"}
    out.update({f"library {lib}": v for lib, v in library_versions().items()})
    out.update(file_hashes())
    return out


def digest(fp: dict[str, str]) -> str:
    """One string standing for a whole fingerprint (what each task carries)."""
    return hashlib.sha256(json.dumps(fp, sort_keys=True).encode()).hexdigest()


def what(key: str) -> str:
    """What a fingerprint entry is, in words: ``"hidden suite autograder/hidden/ex01_torch_mlp.py"``."""
    if key == "python" or key.startswith("library "):
        return key
    kinds = (("autograder/hidden/", "hidden suite"), ("solutions/", "reference solution"),
             ("autograder/data/", "dataset"), ("autograder/messages/", "messages"),
             ("autograder/core/tolerances.py", "tolerances"), ("autograder/core/compare.py", "comparison"))
    for prefix, kind in kinds:
        if key.startswith(prefix):
            return f"{kind} {key}"
    if key.startswith("autograder/exercises/"):
        return f"{'probes' if key.endswith('/probes.py') else 'exercise'} {key}"
    return f"engine {key}"


def differences(mine: dict[str, str], theirs: dict[str, str], limit: int = 4) -> list[str]:
    """Where this install (``mine``) parts from the client's (``theirs``), most telling first.

    Args:
        mine: this worker's :func:`fingerprint`.
        theirs: the client's.
        limit: at most this many entries are named; a last one counts the rest.

    Returns:
        Phrases like ``"hidden suite autograder/hidden/ex01_torch_mlp.py differs"`` or
        ``"library flax 0.8.5 here, 0.10.2 on the client"``; ``[]`` when they are equal.
    """
    keys = sorted(set(mine) | set(theirs), key=lambda k: (not k.startswith(("library", "python")), k))
    out = []
    for key in keys:
        a, b = mine.get(key), theirs.get(key)
        if a == b:
            continue
        if key == "python" or key.startswith("library "):
            out.append(f"{key} {a or 'absent'} here, {b or 'absent'} on the client")
        elif a is None:
            out.append(f"{what(key)} is missing here")
        elif b is None:
            out.append(f"{what(key)} is here but not on the client")
        else:
            out.append(f"{what(key)} differs")
    if len(out) > limit:
        out = [*out[:limit], f"and {len(out) - limit} more"]
    return out


def missing_files(libraries: tuple[str, ...] = LIBRARIES) -> list[str]:
    """Installed libraries whose files are not all there (a folder hidden or deleted under its metadata).

    Cheap (a ``stat`` per file the wheel installed): it catches what the versions alone do not see
    before the slower :class:`ImportCheck` ends.

    Returns:
        One line per library that lacks files: ``"flax: 243 of its 244 files are missing (e.g. flax/__init__.py)"``.
    """
    out = []
    for lib in libraries:
        try:
            dist = importlib.metadata.distribution(lib)
            record = dist.read_text("RECORD") or ""
        except importlib.metadata.PackageNotFoundError:
            continue  # its version says "absent": differences() names it
        # RECORD itself, not ``dist.files``: once Dask imported importlib_metadata (the backport), that
        # answers for ``importlib.metadata`` too and lists other files of a package whose folder is hidden
        names = [row[0] for row in csv.reader(record.splitlines()) if row]
        files = [f for f in names if not f.startswith("..") and "__pycache__" not in f
                 and not f.endswith(_SKIP_SUFFIXES)]
        missing = [f for f in files if not os.path.exists(dist.locate_file(f))]
        if missing:
            out.append(f"{lib}: {len(missing)} of its {len(files)} files are missing (e.g. {missing[0]})")
    return out


class ImportCheck:
    """Imports what grading needs in a fresh process set up as a grading worker is (started at once).

    Args:
        modules: module names (default: what the zygote imports, ``_warmup.PRELOAD``).
        cpu_jax: whether JAX runs on the CPU (the workers' environment, ``_environment.worker_env``).
    """

    def __init__(self, modules: tuple[str, ...] | None = None, cpu_jax: bool = True) -> None:
        from autograder.workers import environment as _environment
        from autograder.workers import warmup as _warmup

        names = list(modules if modules is not None else _warmup.PRELOAD)
        self._error = ""
        try:
            self._proc: subprocess.Popen | None = subprocess.Popen(
                [sys.executable, "-m", "autograder.workers.fingerprint", *names], stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=_environment.worker_env(cpu_jax),
                cwd=str(ROOT))
        except OSError as err:
            self._proc, self._error = None, f"the import check could not start: {type(err).__name__}: {err}"

    def result(self, timeout: float = IMPORT_CHECK_TIMEOUT) -> list[str]:
        """Waits for the check (``timeout``: a hang guard).

        Returns:
            One line per module that does not import (``"flax.linen: ModuleNotFoundError: ..."``); ``[]``
            when everything imports.
        """
        if self._proc is None:
            return [self._error]
        try:
            out, err = self._proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            return [f"the import check did not finish within {timeout:.0f} s"]
        try:
            problems = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            tail = (err or out).strip().splitlines()[-3:]
            return [f"the import check died (exit status {self._proc.returncode}): {' | '.join(tail)}"]
        return [f"{name}: {why}" for name, why in problems.items()]

    def stop(self) -> None:
        """Ends the check if it still runs."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.communicate()


def import_problems(modules: tuple[str, ...] | None = None, cpu_jax: bool = True) -> list[str]:
    """:func:`missing_files`, then an :class:`ImportCheck`'s result: ``[]`` when grading can import what it needs."""
    return missing_files() or ImportCheck(modules, cpu_jax).result()


def _check_imports(names: list[str]) -> dict[str, str]:
    from autograder.workers.warmup import failure

    problems = {}
    for name in names:
        try:
            importlib.import_module(name)
        except BaseException as err:  # noqa: BLE001 - whatever stops an import is reported
            problems[name] = failure(err)
    return problems


if __name__ == "__main__":
    print(json.dumps(_check_imports(sys.argv[1:])), flush=True)
