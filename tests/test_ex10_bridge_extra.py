"""ex10_bridge: `jnp.asarray` among the ways a JAX array can share torch's memory (issue 56, item 8).

`jax_arrays_are_copies` judges what happens (a torch step that changes the JAX arrays fails it), not how the arrays
were made: `jax.device_put` and `jnp.from_dlpack` share on CPU, and their mutants fail it. `jnp.asarray` of a tensor's
numpy view shares in JAX versions that take an aligned numpy array without copying; the pinned one copies, so a
submission using it owns its memory and rightly passes. The stub names it in both languages all the same.
"""

from __future__ import annotations

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
