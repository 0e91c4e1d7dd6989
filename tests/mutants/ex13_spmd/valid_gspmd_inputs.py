# VALID: GSPMD by sharded inputs: a Mesh built by hand (auto axes), shard_batch with explicit per-device
#   placement, the plain jax.jit of exercise 05's step (the inputs' shardings drive the partitioner); the mean
#   of the per-device losses as psum / mesh size.
# (expected: full marks; was a case of tests/test_ex13_spmd_extra.py)
import jax
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def make_data_mesh(n_devices=None):
    devices = jax.devices() if n_devices is None else jax.devices()[:n_devices]
    return Mesh(np.array(devices), axis_names=("data",))


def shard_batch(x, mesh):
    sharding = NamedSharding(mesh, PartitionSpec("data"))
    return jax.make_array_from_callback(x.shape, sharding, lambda index: x[index])


def data_parallel_step(loss_fn, optimizer, mesh):
    @jax.jit
    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return step


def per_device_mean_loss(loss_fn, params, x, y, mesh):
    n = mesh.shape["data"]

    def local(p, xs, ys):
        return jax.lax.psum(loss_fn(p, xs, ys), "data") / n

    return jax.shard_map(local, mesh=mesh, in_specs=(PartitionSpec(), PartitionSpec("data"), PartitionSpec("data")),
                         out_specs=PartitionSpec())(params, x, y)
