"""ex12_checkpointing: gradient checkpointing: trading memory for recomputation, in both frameworks."""

from autograder.exercises import Exercise

META = Exercise(
    title="Exercise 12 — gradient checkpointing: trading memory for recomputation, in both frameworks.",
    frameworks=("torch", "jax"),
    dynamo=True,  # torch.utils.checkpoint imports torch._dynamo
    cost=2.8,
    names=("checkpointed_mlp_forward", "saved_residual_count", "torch_checkpointed", "torch_saved_tensor_count"),
)
