"""The exercise registry, built from the packages in ``autograder/exercises/`` (ships to students).

Everything that needs the list of exercises, their order, their frameworks, their scheduling cost,
their contract names or their device count reads it here; nothing else lists exercises. Importing
this module imports each exercise package's ``__init__`` (plain data), never torch, JAX or a probe.
In the students' runtime only the exercises built are present, so the registry lists those.
An exercise's parts (probes, public checks, messages, hints, hidden suite...) are imported by name through
:func:`part` (defined beside the discovery, :mod:`autograder.core.exercise`), nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterable

from autograder.core.exercise import PARTS as PARTS
from autograder.core.exercise import Exercise, discover
from autograder.core.exercise import module_name as module_name
from autograder.core.exercise import part as part

REGISTRY: dict[str, Exercise] = discover()
# The exercises, in order (their folders' names sorted).
EXERCISES: tuple[str, ...] = tuple(REGISTRY)
# Exercises whose workers need PyTorch only: forked as soon as the zygote has imported torch, while it
# goes on importing the JAX stack (a student module importing jax there still works, it imports it itself).
TORCH_ONLY: frozenset[str] = frozenset(name for name, meta in REGISTRY.items() if meta.torch_only)
# Exercises whose workers need the JAX stack only: forked from a zygote that imports nothing else.
JAX_ONLY: frozenset[str] = frozenset(name for name, meta in REGISTRY.items() if meta.jax_only)
DEFAULT_COST = 1.0


def cost(exercise: str) -> float:
    """Scheduling seconds of an exercise (:data:`DEFAULT_COST` for a name the registry does not know)."""
    meta = REGISTRY.get(exercise)
    return meta.cost if meta is not None else DEFAULT_COST


def contracts(exercises: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Each known exercise's contract names (what a notebook's later cells may redefine)."""
    return {ex: REGISTRY[ex].names for ex in exercises if ex in REGISTRY}


def worker_needs(exercise: str) -> str:
    """What a worker of ``exercise`` needs the zygote to have imported (``needs`` of its spec).

    Returns:
        ``"torch"`` (PyTorch-only), ``"jax"`` (JAX-only: see ``_launch.ZygotePair``) or ``"all"``.
    """
    if exercise in TORCH_ONLY:
        return "torch"
    return "jax" if exercise in JAX_ONLY else "all"


# What a zygote can import before it forks, as :func:`zygote_needs` names it.
ZYGOTE_NEEDS: frozenset[str] = frozenset({"torch", "jax", "dynamo", "compile"})


def zygote_needs(exercises: Iterable[str] | None) -> frozenset[str]:
    """What the zygotes of a run that grades ``exercises`` import and warm before forking.

    ``"torch"`` if one of them uses PyTorch, ``"jax"`` if one uses the JAX stack, ``"dynamo"`` if one imports
    ``torch._dynamo``, ``"compile"`` if one runs ``torch.compile`` (its ``frameworks``, ``dynamo``, ``compiles``). A worker of an exercise outside the plan still
    grades: it imports what it needs itself after the fork, as a spawned worker does.

    Args:
        exercises: the exercises the run will grade; None: every one (everything, as before plans).

    Returns:
        A subset of :data:`ZYGOTE_NEEDS`; all of it for None or for a name the registry does not know.
    """
    if exercises is None:
        return ZYGOTE_NEEDS
    needs: set[str] = set()
    for exercise in exercises:
        meta = REGISTRY.get(exercise)
        if meta is None:
            return ZYGOTE_NEEDS
        needs.update(meta.frameworks)
        if meta.dynamo or meta.compiles:
            needs.add("dynamo")
        if meta.compiles:
            needs.add("compile")
    return frozenset(needs)


class UnknownExercise(ValueError):
    """A name that matches no exercise (or more than one); the message lists the choices."""


def resolve(name: str | int, exercises: Iterable[str] | None = None, lang: str = "en") -> str:
    """The one resolver of exercise names: ``"ex05"``, ``"ex5"``, ``"5"``, ``5`` or ``"ex05_jit_train_step"`` -> the full name.

    Args:
        name: a full name, its ``exNN`` prefix (``exN`` too), or the number.
        exercises: the names to choose from (default: every exercise of the registry; the notebook
            passes those its snapshot holds).
        lang: the language of the error's message.

    Returns:
        The full name of the one exercise that ``name`` names.

    Raises:
        UnknownExercise: (a ``ValueError``) ``name`` names no exercise, or several.
    """
    choices = tuple(EXERCISES if exercises is None else exercises)
    if isinstance(name, int) and not isinstance(name, bool):
        text = f"ex{name:02d}"
    else:
        text = str(name).strip()
        number = text[2:] if text.lower().startswith("ex") else text
        if number.isdigit():
            text = f"ex{int(number):02d}"
    match = [e for e in choices if e == text or e.startswith(text + "_")]
    if len(match) == 1:
        return match[0]
    from autograder.core.i18n import render

    raise UnknownExercise(render("exercise.unknown", lang, name=name, choices=", ".join(e[:4] for e in choices)))
