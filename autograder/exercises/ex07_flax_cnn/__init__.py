"""ex07_flax_cnn: a CNN in Flax: channels-last, and a compiled train step (JAX: the trace)."""

from autograder.exercises import Exercise

META = Exercise(
    title="Exercise 07 — a CNN in Flax: channels-last, and a compiled train step (JAX: the trace).",
    frameworks=("jax",),
    cost=7.3,
    names=("FlaxCNN", "to_nhwc", "make_flax_train_step"),
)
