"""ex13_spmd: one training step on many devices (SPMD: GSPMD and shard_map)."""

from autograder.exercises import Exercise

META = Exercise(
    title="Exercise 13 — one training step on many devices (SPMD: GSPMD and shard_map).",
    frameworks=("jax",),
    cost=3.1,
    names=("make_data_mesh", "shard_batch", "data_parallel_step", "per_device_mean_loss"),
    # host CPU devices of a grading worker (jax_num_cpu_devices, set by the worker before JAX's
    # backend starts); the other exercises keep one
    cpu_devices=8,
)
