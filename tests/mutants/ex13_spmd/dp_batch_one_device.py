# MUTANT: moves params, state and batch to one device and runs the plain jitted step there
# FAILS: dp_step_matches_single, dp_step_replicated, dp_step_splits_batch, dp_step_compiles_once, dp_step_optimizers_needing_params, works_on_auto_mesh, dp_step_keeps_inputs
"""Exercise 13 — one training step on many devices (SPMD: GSPMD and shard_map).

JAX programs many devices the way it programs one: you write the program for
the whole batch (*single program*), say how the arrays are laid out over a
*mesh* of devices, and every device runs the same program on its own piece
(*multiple data*: SPMD). Data parallelism is the simplest layout: the batch
is split along its first axis over the devices, the parameters are
replicated (every device holds a full copy), and the gradient is averaged
over the devices so that every copy takes the same step.
    - `jax.make_mesh((n,), ("data",), devices=...)` builds a 1-D mesh whose
      one axis is named "data"; `NamedSharding(mesh, P("data"))` splits an
      array's first axis over it, `NamedSharding(mesh, P())` replicates it;
      `jax.device_put(x, sharding)` places an array.
    - GSPMD: `jax.jit` of the ordinary single-device step, given (or told
      with `in_shardings`/`out_shardings`) sharded inputs, is partitioned by
      the compiler: it inserts the cross-device sum of the gradient itself.
    - `jax.shard_map(f, mesh=..., in_specs=..., out_specs=...)`: you write
      `f` for *one device's shard* and do the communication yourself with
      collectives such as `jax.lax.pmean(value, "data")` (the mean over the
      devices of the mesh axis).
(PyTorch's counterpart is DistributedDataParallel: one process per device,
each with its own model copy, and an all-reduce of the gradients inside
`backward()`.)
The grader gives your code 8 CPU devices and checks meshes of 1, 2, 4 and 8
devices (in a notebook, the set-up cell asks for 8 CPU devices; if JAX was
already running with fewer, the checks use the sizes there are and say so).

What to build:
    - `make_data_mesh(n_devices=None)`: a 1-D mesh with axis name "data"
      over the first `n_devices` of `jax.devices()` (all of them by default).
    - `shard_batch(x, mesh)`: `x` placed with `NamedSharding(mesh, P("data"))`:
      its leading axis split evenly over the mesh (the mesh size divides
      `x.shape[0]`).
    - `data_parallel_step(loss_fn, optimizer, mesh)`: exercise 05's step
      `step(params, opt_state, x, y) -> (params, opt_state, loss)`, jitted,
      for params and optimizer state replicated on `mesh` and a batch `x, y`
      sharded over "data" (as `shard_batch` places it). The loss and the new
      params equal those of the single-device step on the whole batch; the
      new params and state come back replicated on the mesh; repeated calls
      compile once.
    - `per_device_mean_loss(loss_fn, params, x, y, mesh)`: with
      `jax.shard_map` over `mesh`, each device computes
      `loss_fn(params, x_shard, y_shard)` on its own shard, and the result is
      their mean via `jax.lax.pmean` over "data": a replicated scalar. (For a
      loss that is a mean over examples and equal shards, that is the loss of
      the whole batch.) `x, y` come sharded as `shard_batch` places them,
      `params` replicated.

Example:
    >>> mesh = make_data_mesh(4)
    >>> dict(mesh.shape)
    {'data': 4}
    >>> xs = shard_batch(jnp.zeros((32, 2)), mesh)
    >>> xs.addressable_shards[0].data.shape
    (8, 2)
    >>> step = data_parallel_step(bce_loss, optax.adam(0.01), mesh)
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import optax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


def make_data_mesh(n_devices: int | None = None) -> Mesh:
    """A 1-D device mesh for data parallelism.

    Args:
        n_devices: how many of ``jax.devices()`` to use, from the first; None: all.

    Returns:
        A ``jax.sharding.Mesh`` of shape ``{"data": n_devices}``.
    """
    devices = jax.devices()
    n = len(devices) if n_devices is None else int(n_devices)
    return jax.make_mesh((n,), ("data",), devices=devices[:n])


def shard_batch(x: jax.Array, mesh: Mesh) -> jax.Array:
    """``x`` with its leading axis split over the mesh's "data" axis.

    Args:
        x: an array ``(N, ...)``, N divisible by the mesh size.
        mesh: a 1-D mesh with axis "data".

    Returns:
        The same values, placed with ``NamedSharding(mesh, P("data"))``.
    """
    return jax.device_put(x, NamedSharding(mesh, P("data")))


def data_parallel_step(loss_fn: Callable[[dict, jax.Array, jax.Array], jax.Array],
                       optimizer: optax.GradientTransformation, mesh: Mesh) -> Callable:
    """A jitted data-parallel training step.

    Args:
        loss_fn: ``loss_fn(params, x, y) -> scalar``, a mean over the batch.
        optimizer: any optax gradient transformation.
        mesh: a 1-D mesh with axis "data".

    Returns:
        ``step(params, opt_state, x, y) -> (new_params, new_opt_state, loss)``: params and
        state replicated on ``mesh``, ``x, y`` sharded over "data"; ``loss`` at the old params.
    """
    replicated = NamedSharding(mesh, P())
    batch = NamedSharding(mesh, P("data"))

    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    jitted = jax.jit(step)
    device = mesh.devices.flat[0]

    def on_one_device(params, opt_state, x, y):
        return jitted(*jax.device_put((params, opt_state, x, y), device))

    return on_one_device


def per_device_mean_loss(loss_fn: Callable[[dict, jax.Array, jax.Array], jax.Array], params: dict,
                         x: jax.Array, y: jax.Array, mesh: Mesh) -> jax.Array:
    """The mean over the devices of each device's loss on its own shard.

    Args:
        loss_fn: ``loss_fn(params, x, y) -> scalar``.
        params: the parameter pytree (replicated).
        x: inputs ``(N, ...)``, sharded over "data".
        y: targets ``(N, ...)``, sharded over "data".
        mesh: a 1-D mesh with axis "data".

    Returns:
        A replicated scalar: ``pmean`` over "data" of the per-device losses.
    """
    def per_device(p, xs, ys):
        return jax.lax.pmean(loss_fn(p, xs, ys), "data")

    return jax.shard_map(per_device, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P())(params, x, y)
