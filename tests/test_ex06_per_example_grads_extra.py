"""ex06: the reference agrees with plain oracles, and other valid ways to write it get full marks."""

from __future__ import annotations

import importlib.util
import re

import numpy as np
import pytest
from conftest import make_submission

from autograder._paths import SOLUTIONS
from autograder.messages import placeholders

EX = "ex06_per_example_grads"

PE = """    def one_example(p: Any, xi: jax.Array, yi: jax.Array) -> Any:
        return jax.grad(loss_fn)(p, xi[None], yi[None])

    return jax.vmap(one_example, in_axes=(None, 0, 0))(params, x, y)
"""
CLIP = """    leaves = jax.tree.leaves(per_example)
    n = leaves[0].shape[0]
    sq = sum(jnp.sum(jnp.reshape(leaf, (n, -1)) ** 2, axis=1) for leaf in leaves)
    scale = 1.0 / jnp.maximum(1.0, jnp.sqrt(sq) / max_norm)

    def clip_mean(leaf: jax.Array) -> jax.Array:
        return jnp.mean(leaf * jnp.reshape(scale, (n,) + (1,) * (leaf.ndim - 1)), axis=0)

    return jax.tree.map(clip_mean, per_example)
"""
TORCH = """    params = {name: p.detach() for name, p in model.named_parameters()}
    buffers = {name: b.detach() for name, b in model.named_buffers()}

    def one_example(p: dict[str, Tensor], xi: Tensor, yi: Tensor) -> Tensor:
        out = functional_call(model, (p, buffers), (xi.unsqueeze(0),))
        return loss_fn(out, yi.unsqueeze(0))

    return vmap(grad(one_example), in_dims=(None, 0, 0))(params, x, y)
"""

VARIANTS = {
    # jacobian of the vector of per-example losses; per-example vmapped clipping; grad_and_value, no detach
    "jacrev_vmapped_clip_grad_and_value": [
        (PE, """    def losses(p: Any) -> jax.Array:
        return jax.vmap(lambda xi, yi: loss_fn(p, xi[None], yi[None]))(x, y)

    return jax.jacrev(losses)(params)
"""),
        (CLIP, """    def norm(g: Any) -> jax.Array:
        return jnp.sqrt(sum(jnp.vdot(leaf, leaf) for leaf in jax.tree.leaves(g)))

    factor = jnp.minimum(1.0, max_norm / jax.vmap(norm)(per_example))
    clipped = jax.vmap(lambda g, s: jax.tree.map(lambda leaf: leaf * s, g))(per_example, factor)
    return jax.tree.map(lambda leaf: leaf.mean(axis=0), clipped)
"""),
        (TORCH, """    params = dict(model.named_parameters())

    def compute_loss(p: dict[str, Tensor], xi: Tensor, yi: Tensor) -> Tensor:
        return loss_fn(functional_call(model, p, (xi[None],)), yi[None])

    grads, _ = vmap(torch.func.grad_and_value(compute_loss), in_dims=(None, 0, 0))(params, x, y)
    return {k: g.detach() for k, g in grads.items()}
"""),
    ],
    # batch axis added outside vmap; clipping with a Python loop over concrete norms (not jit-able, allowed)
    "outer_batch_axis_python_clip": [
        (PE, """    return jax.vmap(jax.grad(loss_fn), in_axes=(None, 0, 0))(params, x[:, None], y[:, None])
"""),
        (CLIP, """    leaves = jax.tree.leaves(per_example)
    n = leaves[0].shape[0]
    norms = [float(jnp.sqrt(sum(jnp.sum(leaf[i] ** 2) for leaf in leaves))) for i in range(n)]
    scale = jnp.array([1.0 / max(1.0, v / max_norm) for v in norms], dtype=jnp.float32)
    return jax.tree.map(lambda leaf: jnp.mean(leaf * scale.reshape((n,) + (1,) * (leaf.ndim - 1)), axis=0),
                        per_example)
"""),
    ],
}


def _source(subs: list[tuple[str, str]]) -> str:
    text = (SOLUTIONS / f"{EX}.py").read_text()
    text = "\n".join(line for line in text.splitlines()
                     if not re.match(r"^\s*# (BEGIN|END) SOLUTION\s*$", line)) + "\n"
    for old, new in subs:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_valid_variant_gets_full_marks(run, tmp_path, variant):
    sub = make_submission(tmp_path / "sub", {EX: _source(VARIANTS[variant])}, only=[EX])
    res = run.grade([str(sub)], only=[EX])[0]["exercises"][EX]
    failed = {t["name"]: t["message"] for t in res["tests"] if not t["passed"]}
    assert not failed, failed
    assert res["score"] == res["max_score"]


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
        assert key.startswith("EX06_")
        assert placeholders(msgs.EN[key]) == placeholders(msgs.ES[key]), key
