"""ex10_bridge: the same model in both frameworks."""

from autograder.exercises import Exercise

META = Exercise(
    title="Exercise 10 — the same model in both frameworks.",
    frameworks=("torch", "jax"),
    dynamo=True,  # its training steps: a torch.optim optimizer imports torch._dynamo
    cost=3.1,
    names=("torch_mlp_to_jax", "jax_to_torch_mlp", "torch_conv_to_flax"),
)
