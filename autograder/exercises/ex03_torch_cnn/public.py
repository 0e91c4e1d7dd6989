"""Public checks of ex03_torch_cnn (shown in the student notebook)."""

from __future__ import annotations

import numpy as np

from autograder.core.i18n import label
from autograder.core.suite import Ctx, Fail, Suite

suite = Suite("ex03_torch_cnn")


def num_classes(rng: np.random.Generator) -> int:
    """A class count other than the default 10, so an ignored argument shows."""
    return int(rng.choice([k for k in range(2, 17) if k != 10]))


def cnn_params(rng: np.random.Generator, n_classes: int) -> list[np.ndarray]:
    """Weights in the contract's `parameters()` order, scaled 1/sqrt(fan_in)."""
    shapes = [((16, 1, 3, 3), 9), ((32, 16, 3, 3), 144), ((64, 128), 128), ((n_classes, 64), 64)]
    out = []
    for shape, fan_in in shapes:
        out.append((rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32))
        out.append((0.1 * rng.standard_normal(shape[0])).astype(np.float32))
    return out


def images(rng: np.random.Generator, n: int) -> np.ndarray:
    """A batch of 8x8 one-channel images in [0, 1], NCHW."""
    return rng.uniform(0.0, 1.0, size=(n, 1, 8, 8)).astype(np.float32)


@suite.check(points=2, hidden=False)
def parameter_shapes_in_order(ctx: Ctx) -> None:
    """`parameters()` lists conv1, conv2, fc1, fc2 (weight then bias), with num_classes outputs."""
    args = [num_classes(ctx.rng), float(ctx.rng.uniform(0.1, 0.6))]
    got, want = ctx.both("param_shapes", call=f"CNN({args[0]}, {args[1]:.2f}).parameters()", args=args)
    if [list(s) for s in got] != [list(s) for s in want]:
        raise Fail("EX03_PARAM_SHAPES", call="CNN(...).parameters()", got=[tuple(s) for s in got])


@suite.check(points=3, hidden=False)
def forward_matches_reference(ctx: Ctx) -> None:
    """eval() mode, same weights, NCHW inputs (N, 1, 8, 8): same logits as the reference (N = 1 too)."""
    k = num_classes(ctx.rng)
    args = [k, float(ctx.rng.uniform(0.1, 0.6))]
    params = cnn_params(ctx.rng, k)
    for n in (1, int(ctx.rng.integers(4, 10))):
        got, want = ctx.both("forward", call="CNN.eval().forward", args=args, params=params, x=images(ctx.rng, n))
        ctx.assert_close(got, want, kind="forward", what=label("ex03.what.forward_batch", n=n))
