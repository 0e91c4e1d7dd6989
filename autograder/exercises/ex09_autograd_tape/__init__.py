"""ex09_autograd_tape: the PyTorch tape."""

from autograder.exercises import Exercise

META = Exercise(
    title="Exercise 09 — the PyTorch tape.",
    # JAX only where the student loaded it: manual_grads' probe watches jax.grad & co. once JAX is in the worker
    frameworks=("torch",),
    cost=0.1,
    names=("backward_graph", "manual_grads"),
)
