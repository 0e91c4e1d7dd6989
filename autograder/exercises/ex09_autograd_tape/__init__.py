"""ex09_autograd_tape: the PyTorch tape."""

from autograder.exercises import Exercise

META = Exercise(
    title="Exercise 09 — the PyTorch tape.",
    frameworks=("torch",),
    cost=0.1,
    names=("backward_graph", "manual_grads"),
)
