"""The exercises: one sub-package per exercise, named ``exNN_name``; nothing else lists them.

An exercise package holds everything of the exercise that ships to students::

    autograder/exercises/exNN_name/
        __init__.py   META = Exercise(...): title, frameworks, cost, contract names (plain data only)
        probes.py     what runs beside the student's code in a worker (measures, never judges)
        public.py     the public checks (``suite``), shown in the notebook's self-check
        messages.py   the exercise's message catalogue (``EN`` and ``ES``)

Its hidden suite is ``autograder/hidden/exNN_name.py`` (never shipped), its reference solution
``solutions/exNN_name.py``, its mutants ``tests/mutants/exNN_name/``. The registry
(:mod:`autograder._registry`) is built from the packages found here, in name order; this module
imports neither torch nor JAX, and importing an exercise package imports only its metadata.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass

PACKAGE_NAME = re.compile(r"ex\d\d_[a-z0-9_]+")
FRAMEWORKS = ("torch", "jax")


@dataclass(frozen=True)
class Exercise:
    """One exercise's metadata, declared once, in its package's ``__init__.py`` as ``META``.

    Attributes:
        title: the exercise's title (English), as its instructions open.
        frameworks: what its workers import: ``("torch",)``, ``("jax",)`` or ``("torch", "jax")``.
            PyTorch-only exercises are forked as soon as the zygote has torch.
        cost: grading seconds of one submission, reference included (only the order matters:
            longest first, see ``autograder._engine.schedule``).
        names: the contract: the names a submission defines (a module with none of them is
            "not attempted").
        cpu_devices: host CPU devices JAX gets in this exercise's workers (None: JAX's default).
        name: the package's name (``exNN_name``), filled in by discovery.
    """

    title: str
    frameworks: tuple[str, ...]
    cost: float
    names: tuple[str, ...]
    cpu_devices: int | None = None
    name: str = ""

    def __post_init__(self) -> None:
        if not self.frameworks or any(f not in FRAMEWORKS for f in self.frameworks):
            raise ValueError(f"frameworks must be a non-empty tuple of {FRAMEWORKS}, got {self.frameworks!r}")
        if not self.names or not all(isinstance(n, str) and n.isidentifier() for n in self.names):
            raise ValueError(f"names must be a non-empty tuple of identifiers, got {self.names!r}")

    @property
    def torch_only(self) -> bool:
        """Whether its workers need PyTorch only."""
        return self.frameworks == ("torch",)

    @property
    def jax_only(self) -> bool:
        """Whether its workers need the JAX stack only."""
        return self.frameworks == ("jax",)


def package_names() -> list[str]:
    """Names of the exercise packages present (``exNN_name``), sorted."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__)
                  if info.ispkg and PACKAGE_NAME.fullmatch(info.name))


def discover() -> dict[str, Exercise]:
    """Every exercise package's ``META``, by name, in order (the name filled in from the folder)."""
    out: dict[str, Exercise] = {}
    for name in package_names():
        meta = getattr(importlib.import_module(f"{__name__}.{name}"), "META", None)
        if not isinstance(meta, Exercise):
            raise TypeError(f"autograder/exercises/{name}/__init__.py must define META = Exercise(...)")
        if meta.name not in ("", name):
            raise ValueError(f"autograder/exercises/{name}: META.name is {meta.name!r}")
        out[name] = meta if meta.name else _named(meta, name)
    return out


def _named(meta: Exercise, name: str) -> Exercise:
    from dataclasses import replace

    return replace(meta, name=name)
