"""ex13's self-check sees data-parallel mistakes on any runtime (issue 54, item 1).

On a runtime whose JAX has one device (a one-chip TPU, a single GPU, a CPU session where JAX started before the
set-up cell) every mesh is a mesh of one device, where a gradient averaged per device, a loss taken per device, a
batch replicated instead of split or ``psum`` for ``pmean`` give the right numbers: such code PASSED the public
checks there. Now the checks run in a separate process on 8 CPU devices (autograder/builders/public_devices.py);
where they cannot, the report says so and is no pass.

On a TPU host (``TAPETRACE_TEST_HOST_JAX=tpu``) the same test runs with that process's JAX on the one chip,
as in a Colab TPU runtime (measured: docs/devices-and-tolerances.md).

One Python process, whose JAX starts with ONE CPU device before the notebook's runtime is loaded (the runtime zip
built from this tree, with the committed template's snapshot), checks: the solution and one mistake end to end
(``public.run`` as ``check.py`` calls it), then every mistake below in one separate process (batched: one JAX
start for them all), then the names alone (no code to hand over): not a pass.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from autograder import builders
from autograder.builders import notebook as _notebook
from autograder.builders import public_devices
from autograder.builders import runtime as _runtime
from autograder.builders.build import committed_snapshot
from autograder.builders.snapshot import SNAPSHOT_ARC

EX = "ex13_spmd"

HEAD = '''import jax
import optax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
'''

# A correct ex13, written here (not read from solutions/), one function per entry.
RIGHT = {
    "make_data_mesh": '''
def make_data_mesh(n_devices=None):
    devices = jax.devices()
    n = len(devices) if n_devices is None else int(n_devices)
    return jax.make_mesh((n,), ("data",), devices=devices[:n])
''',
    "shard_batch": '''
def shard_batch(x, mesh):
    return jax.device_put(x, NamedSharding(mesh, P("data")))
''',
    "data_parallel_step": '''
def data_parallel_step(loss_fn, optimizer, mesh):
    replicated, batch = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))

    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return jax.jit(step, in_shardings=(replicated, replicated, batch, batch),
                   out_shardings=(replicated, replicated, replicated))
''',
    "per_device_mean_loss": '''
def per_device_mean_loss(loss_fn, params, x, y, mesh):
    def per_device(p, xs, ys):
        return jax.lax.pmean(loss_fn(p, xs, ys), "data")

    return jax.shard_map(per_device, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P())(params, x, y)
''',
}


def _shard_map_step(body: str) -> str:
    """A shard_map data_parallel_step whose per-device body is ``body`` (``loss``, ``grads`` from the local loss)."""
    return f'''
def data_parallel_step(loss_fn, optimizer, mesh):
    def local(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
{body}
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return jax.jit(jax.shard_map(local, mesh=mesh, in_specs=(P(), P(), P("data"), P("data")),
                                 out_specs=(P(), P(), P()), check_vma=False))
'''


# Mistakes that give the right numbers on a mesh of one device, and which public check sees each on several.
WRONG = {
    # gradients averaged on each device, never across: each device takes its own step
    "grads_per_shard": _shard_map_step('        loss = jax.lax.pmean(loss, "data")'),
    # gradients summed across devices (psum where pmean is meant): n times too large
    "grads_psum": _shard_map_step('        loss = jax.lax.pmean(loss, "data")\n'
                                  '        grads = jax.lax.psum(grads, "data")'),
    # the loss of one device's shard, not of the batch (the gradients are right)
    "loss_per_shard": _shard_map_step('        grads = jax.lax.pmean(grads, "data")'),
    # the batch copied to every device instead of split
    "batch_replicated": '''
def shard_batch(x, mesh):
    return jax.device_put(x, NamedSharding(mesh, P()))
''',
    # the batch on the first device only
    "batch_one_device": '''
def shard_batch(x, mesh):
    return jax.device_put(x, mesh.devices.flat[0])
''',
    # the sum of the per-device losses (psum where pmean is meant)
    "pdml_psum": '''
def per_device_mean_loss(loss_fn, params, x, y, mesh):
    def per_device(p, xs, ys):
        return jax.lax.psum(loss_fn(p, xs, ys), "data")

    return jax.shard_map(per_device, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P())(params, x, y)
''',
    # each device's own loss, never averaged: the first device's shard's loss
    "pdml_per_shard": '''
def per_device_mean_loss(loss_fn, params, x, y, mesh):
    def per_device(p, xs, ys):
        return loss_fn(p, xs, ys)

    return jax.shard_map(per_device, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P(),
                         check_vma=False)(params, x, y)
''',
    # every device, whatever n asks for
    "mesh_ignores_n": '''
def make_data_mesh(n_devices=None):
    return jax.make_mesh((len(jax.devices()),), ("data",), devices=jax.devices())
''',
}


def _source(**override: str) -> str:
    return HEAD + "".join(override.get(name, text) for name, text in RIGHT.items())


def _runtime_zip(path: Path) -> Path:
    """The notebook's runtime as this tree builds it, with the committed English template's snapshot."""
    exercises = json.loads((builders.TEMPLATES["en"] / _notebook.NOTEBOOK).read_text(encoding="utf-8"))[
        "metadata"]["tapetrace"]["exercises"]
    members = _runtime.runtime_members(exercises)
    snap = committed_snapshot(builders.TEMPLATES["en"])
    assert snap, "the committed template holds no snapshot"
    members[SNAPSHOT_ARC] = snap
    path.write_bytes(_runtime.zip_bytes(members))
    return path


# Where this test's own JAX starts: the CPU (CI), or a TPU host's one chip (TAPETRACE_TEST_HOST_JAX=tpu).
HOST_JAX = os.environ.get("TAPETRACE_TEST_HOST_JAX", "cpu")

# Run with `python -I`: JAX starts with one device first (JAX_PLATFORMS=HOST_JAX), then the runtime is put on sys.path.
SCRIPT = '''
import json, sys, importlib.util
import jax, jax.numpy as jnp
jnp.zeros(1)
assert jax.device_count() == 1, jax.devices()
sys.path.insert(0, sys.argv[1])
files = json.loads(sys.argv[2])
from autograder.builders import public, public_devices

def load(path):
    spec = importlib.util.spec_from_file_location("ex13_spmd", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod

out = {"platform": jax.devices()[0].platform}
for name in ("right", "grads_per_shard"):
    res = public.run("ex13", load(files[name]), files=(files[name],), lang="en")
    out[name] = {"status": res.status, "report": res.report}
jobs = [public_devices.Job("ex13_spmd", file=path) for path in files.values()]
jobs.append(public_devices.Job("ex13_spmd", source=open(files["right"]).read()))
apart = public_devices.run_apart(jobs, need=8, lang="en", timeout=120.0, wall=600.0)
out["apart_why"] = apart.why
out["apart"] = [{"status": public._status(r["tests"]), "device": r["device"],
                 "failed": {t["name"]: t["code"] for t in r["tests"] if not t["passed"]}} for r in apart.results]
for name in ("right", "pdml_psum"):
    res = public.run("ex13", vars(load(files[name])), lang="es")
    out["names_" + name] = {"status": res.status, "report": res.report}
print("RESULT=" + json.dumps(out))
'''


def test_data_parallel_mistakes_fail_where_jax_started_with_one_device(tmp_path: Path) -> None:
    runtime = _runtime_zip(tmp_path / "runtime.zip")
    files = {"right": tmp_path / "right.py"} | {name: tmp_path / f"{name}.py" for name in WRONG}
    files["right"].write_text(_source(), encoding="utf-8")
    for name, text in WRONG.items():
        function = text.split("def ", 1)[1].split("(", 1)[0]
        files[name].write_text(_source(**{function: text}), encoding="utf-8")
    env = {**os.environ, "JAX_PLATFORMS": HOST_JAX}
    env.pop("XLA_FLAGS", None)
    env.pop("JAX_NUM_CPU_DEVICES", None)
    proc = subprocess.run([sys.executable, "-I", "-c", SCRIPT, str(runtime),
                           json.dumps({k: str(v) for k, v in files.items()})],
                          capture_output=True, text=True, cwd=tmp_path, timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.split("RESULT=", 1)[1])
    assert out["platform"] == HOST_JAX, out["platform"]

    # end to end, as check.py calls it: checked apart on 8 CPU devices, and it says so
    right, wrong = out["right"], out["grads_per_shard"]
    assert right["status"] == "passed", right["report"]
    assert "PASSED" in right["report"] and "separate process on 8 CPU devices" in right["report"]
    assert wrong["status"] == "incorrect" and "PASSED" not in wrong["report"], wrong["report"]
    assert "dp_step_matches_single" in wrong["report"]

    # every mistake, batched in one separate process; the notebook's graded source too
    assert not out["apart_why"], out["apart_why"]
    names = list(files)
    results = dict(zip([*names, "right_source"], out["apart"], strict=True))
    assert results["right"]["status"] == results["right_source"]["status"] == "passed", results["right"]
    for name in WRONG:
        assert results[name]["status"] == "incorrect", (name, results[name])
        assert results[name]["device"]["jax"] == "cpu"
    assert "dp_step_matches_single" in results["grads_psum"]["failed"]
    assert "dp_step_matches_single" in results["loss_per_shard"]["failed"]
    assert results["batch_replicated"]["failed"] == {"shard_batch_splits_rows": "EX13_SHARD_ROWS"}
    assert results["batch_one_device"]["failed"] == {"shard_batch_splits_rows": "EX13_SHARD_DEVICES"}
    assert set(results["pdml_psum"]["failed"]) == set(results["pdml_per_shard"]["failed"]) == {"pdml_matches"}
    assert results["mesh_ignores_n"]["failed"] == {"mesh_matches_contract": "EX13_MESH_SHAPE"}

    # names without their code (no notebook, no file): checked here on one device, and never called a pass
    for name in ("right", "pdml_psum"):
        said = out["names_" + name]
        assert said["status"] == "one device", said
        assert "SIN COMPROBAR EN VARIOS DISPOSITIVOS" in said["report"] and "SUPERADO" not in said["report"]


def test_the_separate_process_gets_cpu_devices_only() -> None:
    env = public_devices.child_env(8, {"XLA_FLAGS": "--xla_force_host_platform_device_count=1 --xla_foo=1",
                                       "JAX_PLATFORMS": "tpu", "PYTHONSTARTUP": "x.py"})
    assert env["XLA_FLAGS"] == "--xla_foo=1 --xla_force_host_platform_device_count=8"
    assert env["JAX_PLATFORMS"] == "cpu" and env["JAX_NUM_CPU_DEVICES"] == "8" and env["CUDA_VISIBLE_DEVICES"] == ""
    assert "PYTHONSTARTUP" not in env


def test_enough_devices_or_none_needed_runs_here() -> None:
    assert public_devices.shortfall(0) is None and public_devices.shortfall(1) is None
