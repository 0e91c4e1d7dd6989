"""ex01_torch_mlp: write an `nn.Module` (PyTorch: the tape)."""

from autograder.exercises import Exercise

META = Exercise(
    title="Exercise 01 — write an `nn.Module` (PyTorch: the tape).",
    frameworks=("torch",),
    cost=0.2,
    names=("MLP",),
)
