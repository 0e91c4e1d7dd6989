"""ex03_torch_cnn: a CNN, channels-first (PyTorch: the tape)."""

from autograder.exercises import Exercise

META = Exercise(
    title="Exercise 03 — a CNN, channels-first (PyTorch: the tape).",
    frameworks=("torch",),
    cost=0.2,
    names=("CNN",),
)
