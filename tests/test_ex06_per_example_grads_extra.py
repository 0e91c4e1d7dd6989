"""ex06: the reference agrees with plain oracles (its valid variants: tests/mutants/ex06_per_example_grads/valid_*.py)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from autograder.core.i18n import placeholders
from autograder.core.paths import SOLUTIONS

EX = "ex06_per_example_grads"


@pytest.fixture(scope="module")
def ref():
    spec = importlib.util.spec_from_file_location("_ref_ex06", SOLUTIONS / f"{EX}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_reference_matches_a_loop_of_grads(ref):
    import jax

    from autograder.exercises.ex06_per_example_grads import probes as probes
    from autograder.exercises.ex06_per_example_grads.public import bce_case, softmax_case

    rng = np.random.default_rng(0)
    for loss, case in (("bce", bce_case(rng, 5)), ("softmax", softmax_case(rng, 4))):
        got = probes.probe_per_example(ref, loss, **case)
        params = jax.tree.map(np.asarray, case["params"])
        for i in range(case["x"].shape[0]):
            one = jax.grad(probes.LOSSES[loss])(params, case["x"][i:i + 1], case["y"][i:i + 1])
            for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(one)):
                np.testing.assert_allclose(g[i], np.asarray(w), rtol=1e-5, atol=1e-6)


def test_reference_clip_matches_numpy(ref):
    from autograder.exercises.ex06_per_example_grads import probes as probes
    from autograder.exercises.ex06_per_example_grads.public import per_example_tree

    rng = np.random.default_rng(1)
    shapes = {"a": [(3, 2), (2,)], "b": {"c": ()}}
    tree = per_example_tree(rng, shapes, 7, 1.3)
    leaves = [tree["a"][0], tree["a"][1], tree["b"]["c"]]
    norms = np.sqrt(sum((leaf.reshape(7, -1).astype(np.float64) ** 2).sum(1) for leaf in leaves))
    assert (norms < 1.3).any() and (norms > 1.3).any()
    scale = 1.0 / np.maximum(1.0, norms / 1.3)
    got = probes.probe_clip(ref, tree, 1.3)
    want = [(leaf * scale.reshape((7,) + (1,) * (leaf.ndim - 1))).mean(0) for leaf in leaves]
    for g, w in zip([got["a"][0], got["a"][1], got["b"]["c"]], want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_reference_torch_matches_autograd_loop(ref):
    import torch

    from autograder.exercises.ex06_per_example_grads import probes as probes
    from autograder.exercises.ex06_per_example_grads.public import torch_case

    case = torch_case(np.random.default_rng(2), 5, "xent")
    got = probes.probe_torch_grads(ref, **case)
    model, loss_fn, x, y = probes._torch_setup(case["loss"], case["params"], case["x"], case["y"])
    for i in range(5):
        model.zero_grad()
        loss_fn(model(x[i:i + 1]), y[i:i + 1]).backward()
        for name, p in model.named_parameters():
            np.testing.assert_allclose(got[name][i], p.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert isinstance(model, torch.nn.Module)


def test_messages_have_the_same_keys_and_placeholders():
    from autograder.exercises.ex06_per_example_grads import messages as msgs

    assert set(msgs.EN) == set(msgs.ES)
    for key in msgs.EN:
        assert key.startswith(("EX06_", "ex06."))  # a message, or a label (ex06.what.*)
        assert placeholders(msgs.EN[key]) == placeholders(msgs.ES[key]), key
