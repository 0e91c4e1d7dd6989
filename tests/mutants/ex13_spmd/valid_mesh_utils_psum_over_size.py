# VALID: mesh from mesh_utils.create_device_mesh wrapped in Mesh (Auto axes); P("data", None, ...) for the
#   batch; per_device_mean_loss as psum / mesh size with a pytree of P() specs for the params
from functools import partial

import jax
import numpy as np
import optax
from jax.experimental import mesh_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def make_data_mesh(n_devices=None):
    devs = jax.devices() if n_devices is None else jax.devices()[:n_devices]
    device_array = mesh_utils.create_device_mesh((len(devs),), devices=devs)
    return Mesh(device_array, axis_names=("data",))


def shard_batch(x, mesh):
    sharding = NamedSharding(mesh, P("data", *([None] * (x.ndim - 1))))
    return jax.device_put(x, sharding)


def data_parallel_step(loss_fn, optimizer, mesh):
    repl = NamedSharding(mesh, P())
    data = NamedSharding(mesh, P("data"))

    @partial(jax.jit, in_shardings=(repl, repl, data, data), out_shardings=(repl, repl, repl))
    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        return params, opt_state, loss

    return step


def per_device_mean_loss(loss_fn, params, x, y, mesh):
    n = mesh.shape["data"]

    def local(p, xb, yb):
        return jax.lax.psum(loss_fn(p, xb, yb), axis_name="data") / n

    param_specs = jax.tree_util.tree_map(lambda _: P(), params)
    f = jax.shard_map(local, mesh=mesh, in_specs=(param_specs, P("data"), P("data")), out_specs=P())
    return f(params, x, y)
