"""ex02_torch_training: the explicit training loop (PyTorch: the tape)."""

from autograder.exercises import Exercise

META = Exercise(
    title="Exercise 02 — the explicit training loop (PyTorch: the tape).",
    frameworks=("torch",),
    dynamo=True,  # its training steps: a torch.optim optimizer imports torch._dynamo
    cost=1.1,
    names=("bce_with_logits", "train_step", "evaluate", "fit"),
)
