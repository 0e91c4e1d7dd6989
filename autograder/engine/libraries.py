"""Whether a load that failed is the grader's environment's fault: a library the reference needs is missing.

A student's module that cannot be loaded because ``import flax`` fails is the student's problem only
when the grader's own environment imports flax. Where it does not (a broken or partial install, a
folder hidden by a mount, a wheel missing from the image), every correct submission would fail the
same way: that is the grader's trouble (status ``grader_error``, never a crash blamed on the student),
on a local run as on a Dask worker, which is refused for the same reason at admission
(``autograder/scaleout/cluster_worker.py``).

The check costs one fresh process importing what grading needs (:class:`autograder.workers.fingerprint.ImportCheck`),
paid at most once per run and only after a load failed.
"""

from __future__ import annotations

import ast
import functools
import threading
from typing import Any

from autograder.core import syntax as _syntax
from autograder.core.paths import SOLUTIONS

# A failed load that may come from the environment: the worker died while loading, or an import failed.
_IMPORT_ERRORS = ("ModuleNotFoundError", "ImportError")


def may_be_missing_library(status: dict[str, Any]) -> bool:
    """Whether a student's failed load status could come from a library missing in the grader's environment.

    Args:
        status: the worker's load status (``_handle.Worker.status``).
    """
    code = status.get("code")
    if code == "LOAD_CRASHED":
        return True
    if code != "LOAD_EXCEPTION":
        return False
    error = str((status.get("fields") or {}).get("error", ""))
    return error.startswith(_IMPORT_ERRORS)


@functools.cache
def reference_imports(exercise: str) -> frozenset[str]:
    """The top-level packages the reference solution of ``exercise`` imports (``torch``, ``flax``...)."""
    try:
        tree = _syntax.parse((SOLUTIONS / f"{exercise}.py").read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return frozenset()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return frozenset(names)


class LibraryCheck:
    """The grader environment's import problems, found once per run (thread-safe, lazy).

    Args:
        cpu_jax: whether JAX runs on the CPU (the workers' environment).
    """

    def __init__(self, cpu_jax: bool = True) -> None:
        self._cpu_jax = cpu_jax
        self._lock = threading.Lock()
        self._problems: list[str] | None = None

    def problems(self) -> list[str]:
        """One line per library grading cannot import (``"flax: 3 of its 244 files are missing ..."``)."""
        with self._lock:
            if self._problems is None:
                from autograder.workers import fingerprint as _fingerprint

                self._problems = _fingerprint.import_problems(cpu_jax=self._cpu_jax)
            return list(self._problems)

    def trouble(self, exercise: str) -> str | None:
        """Why ``exercise`` cannot be graded here (a library its reference imports is broken), or None.

        Returns:
            A reason for the instructor (``grader_reason``), naming the libraries and what the check saw.
        """
        wanted = reference_imports(exercise)
        bad = [p for p in self.problems() if _package(p) in wanted]
        if not bad:
            return None
        names = ", ".join(sorted({_package(p) for p in bad}))
        return (f"the grader's environment cannot import {names}, which the reference needs: "
                + "; ".join(bad)[:600] + " — repair the install (the same one every worker uses), then --resume")


_IMPORTED_AS = {"jaxlib": "jax"}  # a distribution whose files break the import of another name


def _package(problem: str) -> str:
    """``"flax.linen: ModuleNotFoundError: ..."`` -> ``"flax"``."""
    name = problem.split(":", 1)[0].strip().split(".")[0]
    return _IMPORTED_AS.get(name, name)
