"""Public checks of __NAME__ (shown in the student notebook; the hidden suite adds its own)."""

from __future__ import annotations

import numpy as np

from autograder.core.suite import Ctx, Suite

suite = Suite("__NAME__")


def random_input(ctx: Ctx, shape: tuple[int, ...]) -> np.ndarray:
    """A float32 input whose rows have their own offsets and scales (also the hidden suite's).

    A wrong axis or a missing centring shows in the output; inputs come from ``ctx.rng`` only (the notebook
    replays them).

    Args:
        ctx: The check's context.
        shape: The input's shape.

    Returns:
        The input.
    """
    rows = shape[:-1] + (1,)
    x = ctx.rng.standard_normal(shape) * ctx.rng.uniform(0.5, 3.0, rows) + ctx.rng.uniform(-2.0, 2.0, rows)
    return x.astype(np.float32)


def random_dims(ctx: Ctx, k: int) -> tuple[int, ...]:
    """``k`` distinct sizes in [2, 12): no two axes alike, so a transposed reduction cannot pass.

    Args:
        ctx: The check's context.
        k: How many sizes (the input's rank).

    Returns:
        The sizes.
    """
    return tuple(int(v) for v in ctx.rng.permutation(np.arange(2, 12))[:k])


@suite.check(points=4, hidden=False)
def matches_reference(ctx: Ctx) -> None:
    """A `(n, d)` input: the same output as the reference."""
    got, want = ctx.both("output", call="__FUNC__(x)", x=random_input(ctx, random_dims(ctx, 2)))
    ctx.assert_close(got, want, kind="forward", what="__FUNC__(x)", framework="__FRAMEWORK__")
