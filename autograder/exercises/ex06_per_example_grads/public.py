"""Public checks of ex06_per_example_grads (shown in the student notebook)."""

from __future__ import annotations

import numpy as np

from autograder.core.suite import Ctx, Suite

suite = Suite("ex06_per_example_grads")


def _normal(rng: np.random.Generator, shape: tuple[int, ...], scale: float = 1.0) -> np.ndarray:
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def bce_case(rng: np.random.Generator, n: int) -> dict:
    """Exercise 04's MLP pytree {"W": [...], "b": [...]}, inputs (n, d), 0/1 targets (n,)."""
    n_hidden = int(rng.integers(1, 3))
    dims = [int(v) for v in rng.integers(2, 7, size=n_hidden + 1)] + [1]
    params = {"W": [_normal(rng, (a, b), 1.0 / np.sqrt(a)) for a, b in zip(dims[:-1], dims[1:])],
              "b": [_normal(rng, (b,), 0.3) for b in dims[1:]]}
    x = _normal(rng, (n, dims[0]), 1.5)
    y = (rng.random(n) < 0.5).astype(np.float32)
    return {"params": params, "x": x, "y": y}


def softmax_case(rng: np.random.Generator, n: int) -> dict:
    """Another pytree {"hidden": {"kernel", "bias"}, "out": (w, b)}, int labels (n,)."""
    d, h, k = (int(v) for v in rng.integers(2, 6, size=3))
    k += 1
    params = {"hidden": {"kernel": _normal(rng, (d, h), 1.0 / np.sqrt(d)), "bias": _normal(rng, (h,), 0.3)},
              "out": (_normal(rng, (h, k), 1.0 / np.sqrt(h)), _normal(rng, (k,), 0.3))}
    x = _normal(rng, (n, d), 1.5)
    y = rng.integers(0, k, size=n).astype(np.int32)
    return {"params": params, "x": x, "y": y}


def per_example_tree(rng: np.random.Generator, shapes: dict, n: int, max_norm: float) -> dict:
    """Random per-example gradients (leaves (n, ...)) whose global norms spread around `max_norm`.

    Args:
        rng: the check's generator.
        shapes: a pytree of dicts/lists/tuples whose leaves are per-example shapes.
        n: number of examples.
        max_norm: the clipping norm; half the example norms lie in [0.2, 0.8] x max_norm, half in [1.5, 5] x.
    """
    def build(node):
        if isinstance(node, dict):
            return {k: build(v) for k, v in node.items()}
        if isinstance(node, list) and node and not isinstance(node[0], int):
            return [build(v) for v in node]
        if isinstance(node, tuple) and node and not isinstance(node[0], int):
            return tuple(build(v) for v in node)
        return rng.standard_normal((n, *node))

    tree = build(shapes)
    leaves: list[np.ndarray] = []

    def collect(node):
        if isinstance(node, dict):
            for v in node.values():
                collect(v)
        elif isinstance(node, (list, tuple)):
            for v in node:
                collect(v)
        else:
            leaves.append(node)

    collect(tree)
    norms = np.sqrt(sum(np.sum(leaf.reshape(n, -1) ** 2, axis=1) for leaf in leaves))
    # Always both kinds: about half the examples below max_norm (left alone), half above (clipped).
    ratios = np.concatenate([rng.uniform(0.2, 0.8, size=n - n // 2), rng.uniform(1.5, 5.0, size=n // 2)])
    target = max_norm * rng.permutation(ratios)
    factor = target / norms

    def scale(node):
        if isinstance(node, dict):
            return {k: scale(v) for k, v in node.items()}
        if isinstance(node, list):
            return [scale(v) for v in node]
        if isinstance(node, tuple):
            return tuple(scale(v) for v in node)
        return (node * factor.reshape((n,) + (1,) * (node.ndim - 1))).astype(np.float32)

    return scale(tree)


def torch_case(rng: np.random.Generator, n: int, loss: str) -> dict:
    """Weights of the probe's torch net (Linear(d, h), tanh, Linear(h, k)), inputs and targets."""
    d, h, k = (int(v) for v in rng.integers(2, 7, size=3))
    k += 1
    params = [_normal(rng, (h, d), 1.0 / np.sqrt(d)), _normal(rng, (h,), 0.3),
              _normal(rng, (k, h), 1.0 / np.sqrt(h)), _normal(rng, (k,), 0.3)]
    x = _normal(rng, (n, d), 1.5)
    y = rng.integers(0, k, size=n).astype(np.int64) if loss == "xent" else _normal(rng, (n, k))
    return {"loss": loss, "params": params, "x": x, "y": y}


@suite.check(points=2, hidden=False)
def per_example_grads_match_reference(ctx: Ctx) -> None:
    """Entry i equals the gradient on x[i:i+1]; leaves have a leading axis N."""
    case = bce_case(ctx.rng, n=int(ctx.rng.integers(5, 12)))
    got, want = ctx.both("per_example", call="per_example_grads(bce_loss, params, x, y)", loss="bce", **case)
    ctx.assert_close(got, want, kind="step", what="per_example_grads(bce_loss, params, x, y)", framework="jax")


@suite.check(points=1, hidden=False)
def clip_and_average_matches_reference(ctx: Ctx) -> None:
    """Per-example global norm, scale by 1/max(1, norm/max_norm), mean over examples."""
    case = bce_case(ctx.rng, n=1)
    shapes = {k: [list(a.shape) for a in v] for k, v in case["params"].items()}
    max_norm = float(ctx.rng.uniform(0.5, 2.0))
    n = int(ctx.rng.integers(6, 12))
    per_example = per_example_tree(ctx.rng, shapes, n, max_norm)
    got, want = ctx.both("clip", call="clip_and_average(per_example, max_norm)", per_example=per_example,
                         max_norm=max_norm)
    ctx.assert_close(got, want, kind="step", what="clip_and_average(per_example, max_norm)", framework="jax")


@suite.check(points=1, hidden=False)
def torch_per_example_grads_match_reference(ctx: Ctx) -> None:
    """Keys are named_parameters() names, values (N, *shape), entry i = grad on x[i:i+1]."""
    for loss in ("xent", "mse"):
        case = torch_case(ctx.rng, int(ctx.rng.integers(4, 9)), loss)
        got, want = ctx.both("torch_grads", call=f"torch_per_example_grads(model, {loss}_loss, x, y)", **case)
        ctx.assert_close(got, want, kind="step", what=f"torch_per_example_grads(model, {loss}_loss, x, y)")
