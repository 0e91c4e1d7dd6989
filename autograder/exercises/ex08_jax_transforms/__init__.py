"""ex08_jax_transforms: grad of grad, `lax.cond`, jaxprs and explicit keys (JAX: the trace)."""

from autograder.exercises import Exercise

META = Exercise(
    title="Exercise 08 — grad of grad, `lax.cond`, jaxprs and explicit keys (JAX: the trace).",
    frameworks=("jax",),
    cost=2.6,
    names=("nth_derivative", "coin_net", "count_ops", "dropout"),
)
