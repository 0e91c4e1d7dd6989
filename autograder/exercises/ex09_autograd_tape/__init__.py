"""ex09_autograd_tape: the PyTorch tape."""

from autograder.exercises import Exercise

META = Exercise(
    title="Exercise 09 — the PyTorch tape.",
    # its probes import JAX too: manual_grads' tripwires wrap jax.grad & co. Planned here, the zygote imports it
    # before forking; left out, each worker imported it inside a 2-point check, on the student's time (~1.2 CPU-s)
    frameworks=("torch", "jax"),
    cost=0.1,
    names=("backward_graph", "manual_grads"),
)
