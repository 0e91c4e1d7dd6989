"""Where things live, and the exercise list (fixed by CURRICULUM.md)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
EXERCISES_DIR = ROOT / "exercises"
HIDDEN = ROOT / "autograder" / "hidden"
TESTS = ROOT / "tests"

EXERCISES: tuple[str, ...] = (
    "ex01_torch_mlp",
    "ex02_torch_training",
    "ex03_torch_cnn",
    "ex04_jax_mlp",
    "ex05_jit_train_step",
    "ex06_per_example_grads",
    "ex07_flax_cnn",
    "ex08_jax_transforms",
    "ex09_autograd_tape",
    "ex10_bridge",
    "ex11_torch_compile",
    "ex12_checkpointing",
    "ex13_spmd",
)

# Exercises whose workers need PyTorch only: forked as soon as the zygote has imported torch,
# while it goes on importing the JAX stack (a student module importing jax there still works,
# it imports it itself).
TORCH_ONLY: frozenset[str] = frozenset({"ex01_torch_mlp", "ex02_torch_training", "ex03_torch_cnn",
                                        "ex09_autograd_tape", "ex11_torch_compile"})


def private_dirs() -> list[str]:
    """Paths a student's worker must not read: the reference solutions, the hidden suites, our tests, the
    repository's history and builds, the sample submissions, and the otter zip's grading settings
    (its seed salt). Covered by an empty tmpfs (files: /dev/null) or carved out of Landlock's allow-list."""
    paths = [SOLUTIONS, HIDDEN, TESTS, ROOT / ".git", ROOT / "dist", ROOT / "examples",
             ROOT / "autograder" / "_otter_settings.json"]
    return [str(p) for p in paths if p.exists()]
