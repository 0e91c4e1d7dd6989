"""An exercise's metadata (:class:`Exercise`) and the discovery of the exercise packages.

The exercise packages (``autograder/exercises/exNN_name/``) sit above the engine's core: the core never
imports them by name in an ``import`` statement, it finds them here, at run time, by their folder names
(the one place that does). The registry (:mod:`autograder.core.registry`) is built from what this finds.
:func:`part` is the one import of an exercise's part by name (its ``probes``, ``public``, ``messages``...,
its hidden suite); every by-name edge into the exercises goes through it, with the part a literal at the
call, so ``tests/test_dynamic_imports.py`` sees each edge and checks it against the layers.
Ships to students (the notebook's runtime); imports neither torch nor JAX.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass
from importlib.util import find_spec
from types import ModuleType

PACKAGE = "autograder.exercises"
# The hidden suites' package: one module per exercise (never shipped to students; the worker's sandbox refuses it).
HIDDEN_PACKAGE = "autograder.hidden"
# The parts :func:`part` loads: "" is the exercise's package itself (its ``META``); "hidden" its hidden suite
# (``autograder/hidden/exNN_name.py``); the others are modules of its package (``autograder/exercises/exNN_name/``).
PARTS = ("", "public", "probes", "messages", "hints", "es", "figure", "hidden")
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
            longest first, see ``autograder.engine.run.schedule``).
        names: the contract: the names a submission defines (a module with none of them is
            "not attempted").
        cpu_devices: host CPU devices JAX gets in this exercise's workers (None: JAX's default).
        dynamo: whether its workers import ``torch._dynamo`` (~1.3 CPU-s): ``torch.compile``, and the first
            call of a ``torch.optim`` optimizer or of ``torch.utils.checkpoint`` import it. A run that
            grades it has its zygote import it once, before forking (``autograder.workers.warmup``).
        compiles: whether its workers run ``torch.compile``: the zygote also warms Dynamo (implies ``dynamo``).
        name: the package's name (``exNN_name``), filled in by discovery.
    """

    title: str
    frameworks: tuple[str, ...]
    cost: float
    names: tuple[str, ...]
    cpu_devices: int | None = None
    dynamo: bool = False
    compiles: bool = False
    name: str = ""

    def __post_init__(self) -> None:
        if not self.frameworks or any(f not in FRAMEWORKS for f in self.frameworks):
            raise ValueError(f"frameworks must be a non-empty tuple of {FRAMEWORKS}, got {self.frameworks!r}")
        if not self.names or not all(isinstance(n, str) and n.isidentifier() for n in self.names):
            raise ValueError(f"names must be a non-empty tuple of identifiers, got {self.names!r}")
        if (self.dynamo or self.compiles) and "torch" not in self.frameworks:
            raise ValueError("dynamo and compiles (torch._dynamo) need \"torch\" among the frameworks")

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
    spec = find_spec(PACKAGE)
    path = list(spec.submodule_search_locations or []) if spec is not None else []
    return sorted(info.name for info in pkgutil.iter_modules(path)
                  if info.ispkg and PACKAGE_NAME.fullmatch(info.name))


def discover() -> dict[str, Exercise]:
    """Every exercise package's ``META``, by name, in order (the name filled in from the folder)."""
    out: dict[str, Exercise] = {}
    for name in package_names():
        meta = getattr(part(name), "META", None)
        if not isinstance(meta, Exercise):
            raise TypeError(f"autograder/exercises/{name}/__init__.py must define META = Exercise(...)")
        if meta.name not in ("", name):
            raise ValueError(f"autograder/exercises/{name}: META.name is {meta.name!r}")
        out[name] = meta if meta.name else _named(meta, name)
    return out


def module_name(exercise: str, part_name: str = "") -> str:
    """Import name of one part of an exercise: ``module_name("ex05_jit_train_step", "probes")``.

    Args:
        exercise: the exercise's package name (``exNN_name``).
        part_name: one of :data:`PARTS` (``""``: the package itself; ``"hidden"``: its hidden suite).

    Raises:
        ValueError: ``part_name`` is not one of :data:`PARTS`.
    """
    if part_name not in PARTS:
        raise ValueError(f"unknown part of an exercise {part_name!r}: expected one of {PARTS}")
    if part_name == "hidden":
        return f"{HIDDEN_PACKAGE}.{exercise}"
    return f"{PACKAGE}.{exercise}.{part_name}" if part_name else f"{PACKAGE}.{exercise}"


def part(exercise: str, part_name: str = "") -> ModuleType:
    """The one import of an exercise's part by name: ``part("ex05_jit_train_step", "probes")``.

    Args:
        exercise: the exercise's package name (``exNN_name``).
        part_name: one of :data:`PARTS`, written as a literal at the call (the layers' test reads it).

    Returns:
        The imported module (imported once; later calls get it from ``sys.modules``).

    Raises:
        ModuleNotFoundError: no such exercise, or it lacks that part (also for a name that is not an
            identifier: a dotted name never reaches another module).
        ValueError: ``part_name`` is not one of :data:`PARTS`.
    """
    name = module_name(exercise, part_name)
    if not exercise.isidentifier():
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return importlib.import_module(name)


def _named(meta: Exercise, name: str) -> Exercise:
    from dataclasses import replace

    return replace(meta, name=name)
