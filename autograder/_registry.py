"""The exercise registry, built from the packages in ``autograder/exercises/`` (ships to students).

Everything that needs the list of exercises, their order, their frameworks, their scheduling cost,
their contract names or their device count reads it here; nothing else lists exercises. Importing
this module imports each exercise package's ``__init__`` (plain data), never torch, JAX or a probe.
In the students' runtime only the exercises built are present, so the registry lists those.
"""

from __future__ import annotations

from autograder.exercises import Exercise, discover

REGISTRY: dict[str, Exercise] = discover()
# The exercises, in order (their folders' names sorted).
EXERCISES: tuple[str, ...] = tuple(REGISTRY)
# Exercises whose workers need PyTorch only: forked as soon as the zygote has imported torch, while it
# goes on importing the JAX stack (a student module importing jax there still works, it imports it itself).
TORCH_ONLY: frozenset[str] = frozenset(name for name, meta in REGISTRY.items() if meta.torch_only)
PACKAGE = "autograder.exercises"
DEFAULT_COST = 1.0


def get(exercise: str) -> Exercise:
    """The metadata of one exercise (its full name).

    Raises:
        KeyError: no such exercise.
    """
    return REGISTRY[exercise]


def cost(exercise: str) -> float:
    """Scheduling seconds of an exercise (:data:`DEFAULT_COST` for a name the registry does not know)."""
    meta = REGISTRY.get(exercise)
    return meta.cost if meta is not None else DEFAULT_COST


def module_name(exercise: str, part: str) -> str:
    """Import name of one part of an exercise package: ``module_name("ex05_jit_train_step", "probes")``."""
    return f"{PACKAGE}.{exercise}.{part}"
