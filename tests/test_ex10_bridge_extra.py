"""ex10_bridge: `jnp.asarray` among the ways a JAX array can share torch's memory (issue 56, item 8).

`jax_arrays_are_copies` judges what happens (a torch step that changes the JAX arrays fails it), not how the arrays
were made: `jax.device_put` and `jnp.from_dlpack` share on CPU, and their mutants fail it. `jnp.asarray` of a tensor's
numpy view shares in JAX versions that take an aligned numpy array without copying; the pinned one copies, so a
submission using it owns its memory and rightly passes. The stub names it in both languages all the same.

Issue 54: the two memory probes run on the host's CPU whatever the run's devices (on a TPU's chip nothing is shared,
and two sharing mutants passed there).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import jax.numpy as jnp
import torch

from autograder.core.paths import ROOT


def test_the_stub_names_jnp_asarray_in_both_languages():
    english = (ROOT / "exercises" / "ex10_bridge.py").read_text(encoding="utf-8").split('"""')[1]
    spanish = (ROOT / "autograder" / "exercises" / "ex10_bridge" / "es.py").read_text(encoding="utf-8").split('"""')[1]
    for text in (english, spanish):
        assert "`jnp.asarray`" in text and "`jax.device_put`" in text and "`jnp.from_dlpack`" in text


def test_pinned_jax_asarray_copies_a_torch_view():
    """If this fails, this JAX shares through jnp.asarray: add a mutant `to_jax_asarray` beside ex10's others
    (`jnp.asarray(layer.bias.detach().numpy())`, FAILS: jax_arrays_are_copies, CODE: EX10_SHARED_MEMORY)."""
    layer = torch.nn.Linear(4, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bias = jnp.asarray(layer.bias.detach().numpy())
        before = float(bias[0])
        with torch.no_grad():
            layer.bias.add_(1.0)
        assert float(bias[0]) == before


# ---------------------------------------------------------------- the memory checks off the host (issue 54)
# A run whose devices are not the host's: JAX's default device is not the host's first CPU (the second of two
# virtual CPU devices here; the chip itself with TAPETRACE_TEST_HOST_JAX=tpu on a TPU host) and torch's grading
# device holds no host memory ("meta", as a CUDA device would not share it). There a bridge that shares torch's
# memory shares nothing (measured on a TPU v5e: `jax.device_put` of a numpy view is a copy on the chip, and the
# mutants `to_jax_device_put` and `to_torch_shares_jax_memory` passed), unless the memory probes run on the host.
MEMORY_SCRIPT = r'''
import importlib.util, json, sys, types
import numpy as np
import jax
if jax.default_backend() == "cpu":
    jax.config.update("jax_default_device", jax.devices()[1])  # a stand-in for the accelerator
from autograder.probing import tools
tools.DEVICE.update({"torch": "meta", "jax": jax.default_backend()})
from autograder.exercises.ex10_bridge import probes

seen = []  # (JAX's default device, the model's device) inside the student's call

def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    spied = types.SimpleNamespace()
    for fn in ("torch_mlp_to_jax", "jax_to_torch_mlp"):
        def spy(*args, _f=getattr(mod, fn)):
            model = args[-1]
            seen.append((str(next(iter(jax.numpy.zeros(()).devices()))), str(next(model.parameters()).device)))
            return _f(*args)
        setattr(spied, fn, spy)
    return spied

rng = np.random.default_rng(7)
dims = [3, 16, 8, 2]
weights = []
for a, b in zip(dims[:-1], dims[1:]):
    weights += [rng.standard_normal((b, a)).astype(np.float32), rng.standard_normal(b).astype(np.float32)]
params = {"W": [rng.standard_normal((a, b)).astype(np.float32) for a, b in zip(dims[:-1], dims[1:])],
          "b": [rng.standard_normal(b).astype(np.float32) for b in dims[1:]]}
x = rng.standard_normal((32, 3)).astype(np.float32)
y = (rng.random((32, 2)) < 0.5).astype(np.float32)
out = {"default": str(jax.config.jax_default_device), "backend": jax.default_backend(), "host": str(jax.devices("cpu")[0])}
for name, path in json.loads(sys.argv[1]).items():
    mod = load(name, path)
    then = probes.probe_to_jax_then_train(mod, dims, weights, x, y, 3)
    leaves = probes.probe_to_torch_leaves(mod, dims, params, 11, x[:, :3])
    out[name] = {"to_jax_moved": [d != 0.0 for d in then["jax_changed"]], "torch_changed": then["torch_changed"],
                 "to_torch_moved": leaves["jax_changed"], "trains": leaves["trains"], "seen": seen[-2:]}
print("RESULT=" + json.dumps(out))
'''

_IMPORTS = "import jax\nimport jax.numpy as jnp\nimport numpy as np\nimport torch\nfrom torch import nn\n\n"
_LAYERS = "    layers = [m for m in model.modules() if isinstance(m, nn.Linear)]\n"
_COPY_IN = ("def jax_to_torch_mlp(params, model):\n" + _LAYERS + "    with torch.no_grad():\n"
            "        for layer, w, b in zip(layers, params['W'], params['b']):\n"
            "            layer.weight.copy_(torch.tensor(np.asarray(w).T))\n"
            "            layer.bias.copy_(torch.tensor(np.asarray(b)))\n")
_COPY_OUT = ("def torch_mlp_to_jax(model):\n" + _LAYERS
             + "    return {'W': [jnp.array(l.weight.detach().numpy().T) for l in layers],\n"
               "            'b': [jnp.array(l.bias.detach().numpy()) for l in layers]}\n")
# Bridges written here, as students write them: which of their arrays share memory on the host (W of shape
# (d_in, d_out) is the transpose of torch's weight, a strided view that `device_put` copies; b is contiguous).
BRIDGES = {
    "copies": (_COPY_OUT + _COPY_IN, {"to_jax": "none", "to_torch": "none"}),
    "device_put_views": ("def torch_mlp_to_jax(model):\n" + _LAYERS
                         + "    return {'W': [jax.device_put(l.weight.detach().numpy().T) for l in layers],\n"
                           "            'b': [jax.device_put(l.bias.detach().numpy()) for l in layers]}\n" + _COPY_IN,
                         {"to_jax": "b", "to_torch": "none"}),
    "dlpack_out": ("def torch_mlp_to_jax(model):\n" + _LAYERS
                   + "    return {'W': [jnp.array(l.weight.detach().numpy().T) for l in layers],\n"
                     "            'b': [jax.dlpack.from_dlpack(l.bias.detach()) for l in layers]}\n" + _COPY_IN,
                   {"to_jax": "b", "to_torch": "none"}),
    "data_from_numpy": (_COPY_OUT + "def jax_to_torch_mlp(params, model):\n" + _LAYERS
                        + "    for layer, w, b in zip(layers, params['W'], params['b']):\n"
                          "        layer.weight.data = torch.from_numpy(np.asarray(w).T)\n"
                          "        layer.bias.data = torch.from_numpy(np.asarray(b))\n",
                        {"to_jax": "none", "to_torch": "all"}),
}


def test_memory_probes_share_on_the_host_whatever_the_run_devices(tmp_path):
    """Each bridge shares exactly where it shares on a CPU runtime, with JAX's default device and torch's grading
    device elsewhere; the student's calls see the host's CPU (JAX's first CPU device, torch's "cpu"). Before the
    probes ran on the host: torch's "meta" model crashed the probe, and on a TPU the sharing bridges passed."""
    files = {}
    for name, (source, _) in BRIDGES.items():
        files[name] = str(tmp_path / f"{name}.py")
        (tmp_path / f"{name}.py").write_text(_IMPORTS + source, encoding="utf-8")
    for name in ("to_jax_device_put", "to_torch_shares_jax_memory"):
        files[name] = str(ROOT / "tests" / "mutants" / "ex10_bridge" / f"{name}.py")
    files["solution"] = str(ROOT / "solutions" / "ex10_bridge.py")
    host_jax = os.environ.get("TAPETRACE_TEST_HOST_JAX", "cpu")
    # one program holds a TPU's chip: this file's other tests must not have opened it in pytest's own process
    assert host_jax == "cpu" or os.environ.get("JAX_PLATFORMS") == "cpu", (
        "run pytest itself with JAX_PLATFORMS=cpu beside TAPETRACE_TEST_HOST_JAX: the probes' process opens the chip")
    env = {**os.environ, "JAX_PLATFORMS": f"{host_jax},cpu" if host_jax != "cpu" else "cpu",
           "XLA_FLAGS": "--xla_force_host_platform_device_count=2", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, json.dumps(files)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.split("RESULT=", 1)[1])
    assert out["backend"] == host_jax and out["default"] != out["host"], out  # the run's JAX is not on the host's CPU
    expected = {name: want for name, (_, want) in BRIDGES.items()}
    expected |= {"to_jax_device_put": {"to_jax": "b", "to_torch": "none"},
                 "to_torch_shares_jax_memory": {"to_jax": "none", "to_torch": "all"},
                 "solution": {"to_jax": "none", "to_torch": "none"}}
    for name, want in expected.items():
        got = out[name]
        assert got["seen"] == [[out["host"], "cpu"]] * 2, (name, got["seen"])
        assert got["torch_changed"] > 0 and got["trains"], (name, got)
        for side in ("to_jax", "to_torch"):
            moved = got[f"{side}_moved"]
            n = len(moved) // 2  # W[0..n-1], then b[0..n-1]
            which = {"none": [False] * 2 * n, "b": [False] * n + [True] * n, "all": [True] * 2 * n}[want[side]]
            assert moved == which, (name, side, moved)


def test_a_worker_keeps_the_host_cpu_beside_an_accelerator():
    """JAX_PLATFORMS naming the accelerator alone would leave no CPU device for the memory probes: the worker adds
    the CPU after it (the accelerator stays JAX's default); a CPU run stays on the CPU alone."""
    script = ("import jax\nfrom autograder.workers import worker\n"
              "jax.config.update('jax_platforms', 'cuda')\n"
              "worker._setup_threads_and_precision({'torch': 'cuda', 'jax': 'gpu'}, None)\n"
              "print(jax.config.jax_platforms)\n"
              "worker._setup_threads_and_precision({'torch': 'cpu', 'jax': 'cpu'}, None)\n"
              "print(jax.config.jax_platforms)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["cuda,cpu", "cpu"]
