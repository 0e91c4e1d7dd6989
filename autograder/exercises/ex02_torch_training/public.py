"""Public checks of ex02_torch_training (shown in the student notebook)."""

from __future__ import annotations

from typing import Any

import numpy as np

from autograder.core.i18n import label
from autograder.core.suite import Ctx, Fail, Suite

suite = Suite("ex02_torch_training")


def mlp_params(rng: np.random.Generator, dims: list[int]) -> list[np.ndarray]:
    """Weights like PyTorch's default init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), (out, in) then (out,)."""
    out = []
    for a, b in zip(dims[:-1], dims[1:]):
        bound = 1.0 / np.sqrt(a)
        out.append(rng.uniform(-bound, bound, size=(b, a)).astype(np.float32))
        out.append(rng.uniform(-bound, bound, size=(b,)).astype(np.float32))
    return out


def mlp_dims(rng: np.random.Generator) -> list[int]:
    """input_dim, two hidden widths, one output (a binary classifier)."""
    return [int(rng.integers(2, 6)), int(rng.integers(4, 12)), int(rng.integers(4, 12)), 1]


def binary_batch(rng: np.random.Generator, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Inputs ``(n, d)`` and 0/1 float targets ``(n, 1)``."""
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = rng.integers(0, 2, size=(n, 1)).astype(np.float32)
    return x, y


def close(ctx: Ctx, got: Any, want: Any, kind: str) -> bool:
    """Whether two trees match within the tolerance of ``kind`` (no failure raised)."""
    try:
        ctx.assert_close(got, want, kind=kind, what="")
    except Fail:
        return False
    return True


def bce_case(rng: np.random.Generator, n: int, k: int, max_abs: float) -> dict[str, np.ndarray]:
    """Logits of mixed signs with magnitudes up to ``max_abs`` and 0/1 targets, shape (n, k)."""
    mags = 10.0 ** rng.uniform(-2.0, np.log10(max_abs), size=(n, k))
    logits = (mags * rng.choice([-1.0, 1.0], size=(n, k))).astype(np.float32)
    targets = rng.integers(0, 2, size=(n, k)).astype(np.float32)
    return {"logits": logits, "targets": targets}


@suite.check(points=1, hidden=False)
def bce_matches_reference(ctx: Ctx) -> None:
    """`bce_with_logits` on moderate logits, shapes (N, 1) and (N, 3): the mean over all elements."""
    for k in (1, 3):
        case = bce_case(ctx.rng, int(ctx.rng.integers(8, 33)), k, max_abs=5.0)
        got, want = ctx.both("bce", call=f"bce_with_logits(logits (N, {k}), targets (N, {k}))", **case)
        ctx.assert_close(got["loss"], want["loss"], kind="forward", what=label("ex02.what.bce_on", k=k))


@suite.check(points=2, hidden=False)
def train_step_matches_reference(ctx: Ctx) -> None:
    """Two calls of `train_step` (SGD): the returned pre-update losses and the parameters match."""
    dims = mlp_dims(ctx.rng)
    params = mlp_params(ctx.rng, dims)
    x, y = binary_batch(ctx.rng, int(ctx.rng.integers(16, 49)), dims[0])
    lr = float(ctx.rng.uniform(0.1, 0.5))
    got, want = ctx.both("train_step", call="train_step(model, optimizer, x, y, loss_fn)",
                         params=params, x=x, y=y, lr=lr, steps=2)
    if got["loss_fn_calls"] == 0:
        raise Fail("EX02_LOSS_FN_UNUSED")
    if got["bad_type"]:
        raise Fail("EX02_NOT_FLOAT", call="train_step(model, optimizer, x, y, loss_fn)", got=got["bad_type"])
    if not close(ctx, got["params"][0], want["params"][0], "step") and close(ctx, got["params"][0], params, "exact"):
        raise Fail("EX02_NO_UPDATE")
    if not close(ctx, got["losses"], want["losses"], "step") and close(ctx, got["losses"], got["post_update"], "step"):
        raise Fail("EX02_LOSS_AFTER_UPDATE")
    ctx.assert_close(got["losses"][0], want["losses"][0], kind="step", what=label("ex02.what.first_loss"))
    ctx.assert_close(got["params"][0], want["params"][0], kind="step", what=label("ex02.what.params_one_step"))
    if not close(ctx, got["params"][1], want["params"][1], "step"):
        raise Fail("EX02_ZERO_GRAD")
    ctx.assert_close(got["losses"], want["losses"], kind="step", what=label("ex02.what.two_losses"))
