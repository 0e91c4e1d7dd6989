"""ex04_jax_mlp: pure functions and pytrees (JAX: the trace)."""

from autograder.exercises import Exercise

META = Exercise(
    title="Exercise 04 — pure functions and pytrees (JAX: the trace).",
    frameworks=("jax",),
    cost=4.9,
    names=("init_params", "mlp_forward", "bce_loss", "accuracy"),
)
