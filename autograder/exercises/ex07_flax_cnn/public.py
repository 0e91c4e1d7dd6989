"""Public checks of ex07_flax_cnn (shown in the student notebook)."""

from __future__ import annotations

import numpy as np

from autograder.core.suite import Ctx, Fail, Suite

suite = Suite("ex07_flax_cnn")

LAYERS = ("Conv_0", "Conv_1", "Dense_0", "Dense_1")


def describe_shapes(tree: object, prefix: str = "") -> str:
    """``Conv_0/kernel (3, 3, 1, 16), ...`` for a nested dict of shape lists."""
    if isinstance(tree, dict):
        parts = [describe_shapes(v, f"{prefix}{k}/") for k, v in tree.items()]
        return ", ".join(p for p in parts if p) or f"{prefix.rstrip('/') or 'variables'} {{}}"
    return f"{prefix.rstrip('/')} {tuple(tree)}"


def draw_params(rng: np.random.Generator, shapes: dict, bias_scale: float = 0.1) -> dict:
    """Params shaped like ``shapes`` (nested dict of shape lists): N(0, 1/fan_in) kernels.

    The scale matches Flax's default ``lecun_normal`` initialiser, so trained
    models and activations behave like a real ``model.init``.
    """
    if isinstance(shapes, dict):
        return {k: draw_params(rng, v, bias_scale) for k, v in shapes.items()}
    shape = tuple(int(s) for s in shapes)
    if len(shape) == 1:
        return (bias_scale * rng.standard_normal(shape)).astype(np.float32)
    fan_in = int(np.prod(shape[:-1]))
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def images(rng: np.random.Generator, n: int) -> np.ndarray:
    """``(n, 8, 8, 1)`` float32 images in [0, 1), like the digits."""
    return rng.random((n, 8, 8, 1)).astype(np.float32)


def diagnose_params(got: dict, want: dict) -> None:
    """Raises the most specific Fail for a variables tree that differs from the reference's."""
    if got == want:
        return
    gp, wp = got.get("params"), want["params"]
    if isinstance(gp, dict):
        k0 = gp.get("Conv_0", {}).get("kernel") if isinstance(gp.get("Conv_0"), dict) else None
        for layer in ("Conv_0", "Conv_1"):
            g = gp.get(layer, {}).get("kernel") if isinstance(gp.get(layer), dict) else None
            w = wp[layer]["kernel"]
            if g is not None and len(g) == 4 and list(g) == [w[3], w[2], w[0], w[1]]:
                raise Fail("EX07_OIHW", layer=layer, got=tuple(g))
        if k0 is not None and len(k0) == 4 and list(k0[:2]) == [3, 3] and k0[2] != wp["Conv_0"]["kernel"][2]:
            raise Fail("EX07_CHANNELS_FIRST", got=tuple(k0), channels=k0[2])
        d0 = gp.get("Dense_0", {}).get("kernel") if isinstance(gp.get("Dense_0"), dict) else None
        same_convs = all(gp.get(c) == wp[c] for c in ("Conv_0", "Conv_1"))
        if same_convs and d0 is not None and len(d0) == 2 and d0[0] != wp["Dense_0"]["kernel"][0]:
            raise Fail("EX07_FLATTEN_SIZE", got=tuple(d0), features=d0[0])
    raise Fail("EX07_PARAM_TREE", got=describe_shapes(got))


@suite.check(points=1, hidden=False)
def param_tree_names_and_shapes(ctx: Ctx) -> None:
    """`FlaxCNN().init` gives Conv_0, Conv_1, Dense_0, Dense_1 with HWIO kernels (via jax.eval_shape)."""
    n = int(ctx.rng.integers(2, 9))
    got, want = ctx.both("param_shapes", call="FlaxCNN().init", num_classes=None, n=n)
    diagnose_params(got["variables"], want["variables"])
    if got["out"] != want["out"]:
        raise Fail("EX07_OUT_SHAPE", call="FlaxCNN()", n=n, got=tuple(got["out"]))


@suite.check(points=1, hidden=False)
def to_nhwc_numpy_and_jax(ctx: Ctx) -> None:
    """`to_nhwc` moves the channel axis last, for numpy and JAX inputs, and returns a jax.Array."""
    n = int(ctx.rng.integers(2, 5))
    c, h, w = (int(v) for v in ctx.rng.choice(np.arange(2, 8), size=3, replace=False))
    for as_jax in (False, True):
        x = ctx.rng.standard_normal((n, c, h, w)).astype(np.float32)
        kind = "a JAX array" if as_jax else "a numpy array"
        call = f"to_nhwc({kind} {(n, c, h, w)})"
        got, want = ctx.both("to_nhwc", call=call, x=x, as_jax=as_jax)
        if tuple(got.shape) != tuple(want.shape):
            raise Fail("EX07_NHWC_SHAPE", call=call, got=tuple(got.shape))
        if got.dtype == want.dtype and np.array_equal(got, x.reshape(want.shape)) and not np.array_equal(got, want):
            raise Fail("EX07_NHWC_RESHAPE", call=call)
        ctx.assert_close(got, want, kind="exact", what=call, framework="jax")


@suite.check(points=1.5, hidden=False)
def forward_matches_reference(ctx: Ctx) -> None:
    """Same params (drawn by the grader), same images: same logits as the reference."""
    n = int(ctx.rng.integers(3, 12))
    got, want = ctx.both("param_shapes", call="FlaxCNN().init", num_classes=None, n=n)
    diagnose_params(got["variables"], want["variables"])
    params = draw_params(ctx.rng, want["variables"])
    x = images(ctx.rng, n)
    got, want = ctx.both("forward", call="FlaxCNN().apply", num_classes=None, params=params, x=x)
    ctx.assert_close(got, want, kind="forward", what="FlaxCNN().apply(params, x)", framework="jax")
