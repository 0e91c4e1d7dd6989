"""ex05_jit_train_step: compile the step (JAX: trace once, run many times)."""

from autograder.exercises import Exercise

META = Exercise(
    title="Exercise 05 — compile the step (JAX: trace once, run many times).",
    frameworks=("jax",),
    cost=4.8,
    names=("make_train_step", "fit"),
)
