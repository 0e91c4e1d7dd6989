"""ex06_per_example_grads: per-example gradients with `vmap` (JAX: the trace; PyTorch: torch.func)."""

from autograder.exercises import Exercise

META = Exercise(
    title="Exercise 06 — per-example gradients with `vmap` (JAX: the trace; PyTorch: torch.func).",
    frameworks=("torch", "jax"),
    cost=1.6,
    names=("per_example_grads", "clip_and_average", "torch_per_example_grads"),
)
