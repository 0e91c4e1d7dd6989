"""ex04_jax_mlp: pure functions and pytrees (JAX: the trace)."""

from autograder.exercises import Exercise

META = Exercise(
    title="Exercise 04 — pure functions and pytrees (JAX: the trace).",
    frameworks=("jax",),
    cost=7.0,
    names=("init_params", "mlp_forward", "bce_loss", "accuracy"),
)
