"""ex13: other valid ways to write the exercise get full marks, and the workers' device counts.

The grader's ex13 workers (student and reference, zygote or spawned) run JAX on 8 CPU devices,
every other exercise on one: measured here from inside a worker.
"""

from __future__ import annotations

import pytest
from conftest import make_submission

from autograder._engine import GradingRun

EX = "ex13_spmd"

# GSPMD by sharded inputs: a Mesh built by hand (auto axes), shard_batch with explicit per-device
# placement, the plain jax.jit of exercise 05's step (the inputs' shardings drive the partitioner);
# the mean of the per-device losses as psum / mesh size.
VARIANT_GSPMD_INPUTS = '''
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
'''

# The step written with shard_map: each device differentiates the pmean of the shards' losses (the
# gradient of a replicated input comes back summed over the devices by itself: pmean-ing the
# gradients of the local loss again would be n times too large), every device applies the same
# update; jitted around it, and per_device_mean_loss jitted with the mesh closed over.
VARIANT_SHARD_MAP_STEP = '''
from functools import partial

import jax
import optax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


def make_data_mesh(n_devices=None):
    n = jax.device_count() if n_devices is None else n_devices
    return jax.make_mesh((n,), ("data",), devices=jax.devices()[:n])


def shard_batch(x, mesh):
    return jax.device_put(x, NamedSharding(mesh, P("data", *([None] * (x.ndim - 1)))))


def data_parallel_step(loss_fn, optimizer, mesh):
    def local(params, opt_state, x, y):
        def mean_loss(p):
            return jax.lax.pmean(loss_fn(p, x, y), axis_name="data")

        loss, grads = jax.value_and_grad(mean_loss)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return jax.jit(jax.shard_map(local, mesh=mesh, in_specs=(P(), P(), P("data"), P("data")),
                                 out_specs=(P(), P(), P())))


@partial(jax.jit, static_argnums=(0, 4))
def per_device_mean_loss(loss_fn, params, x, y, mesh):
    f = jax.shard_map(lambda p, a, b: jax.lax.pmean(loss_fn(p, a, b), "data"), mesh=mesh,
                      in_specs=(P(), P("data"), P("data")), out_specs=P())
    return f(params, x, y)
'''

VARIANTS = {"gspmd_inputs": VARIANT_GSPMD_INPUTS, "shard_map_step": VARIANT_SHARD_MAP_STEP}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_valid_variant_gets_full_marks(run, tmp_path, name):
    sub = make_submission(tmp_path / "sub", {EX: VARIANTS[name]}, only=[EX])
    res = run.grade([str(sub)], only=[EX])[0]["exercises"][EX]
    failed = {t["name"]: t["message"] for t in res["tests"] if not t["passed"]}
    assert not failed, failed


# A submission that reports, through an exception message, how many JAX devices its worker has.
DEVICES_PROBE = '''
import jax


def _report(*args, **kwargs):
    raise RuntimeError(f"DEVICES={jax.device_count()} PLATFORM={jax.default_backend()}")
'''


def _device_count(run: GradingRun, tmp_path, exercise: str, name: str) -> str:
    src = DEVICES_PROBE + f"\n\n{name} = _report\n"
    sub = make_submission(tmp_path / exercise, {exercise: src}, only=[exercise])
    res = run.grade([str(sub)], only=[exercise])[0]["exercises"][exercise]
    return next(t["message"] for t in res["tests"] if "DEVICES=" in t["message"])


def test_ex13_workers_have_eight_cpu_devices_and_the_others_one(run, tmp_path):
    assert "DEVICES=8 PLATFORM=cpu" in _device_count(run, tmp_path, EX, "make_data_mesh")
    assert "DEVICES=1 PLATFORM=cpu" in _device_count(run, tmp_path, "ex12_checkpointing", "checkpointed_mlp_forward")


def test_spawned_ex13_workers_have_eight_cpu_devices(tmp_path):
    spawn = GradingRun(device="cpu", timeout=60, seed=1, launcher="spawn")
    try:
        assert "DEVICES=8 PLATFORM=cpu" in _device_count(spawn, tmp_path, EX, "make_data_mesh")
    finally:
        spawn.close()
