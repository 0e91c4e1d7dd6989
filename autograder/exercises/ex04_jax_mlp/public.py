"""Public checks of ex04_jax_mlp (shown in the student notebook)."""

from __future__ import annotations

import numpy as np

from autograder.core.protocol import check_rng
from autograder.core.suite import Ctx, Fail, Suite

suite = Suite("ex04_jax_mlp")


# Shapes shared by the checks of a run. JAX compiles every eager op (and each jax.random.normal)
# once per shape, and most of ex04's grading time is those compiles (~100 per side when every check
# drew its own widths and batch size). Drawing the widths and the batch size once per run, from a
# generator of their own, lets the checks reuse what the first one compiled, on the student's side
# and the reference's. Values still come from each check's ``ctx.rng``, depths too; the shapes still
# change from run to run (seed), and every check keeps its own contract (distinct widths, a depth).
def _shape_rng(ctx: Ctx) -> np.random.Generator:
    return check_rng(ctx.seed, suite.exercise, "shapes")


def shared_dims(ctx: Ctx, n_hidden: int, d_out: int | None = None) -> list[int]:
    """Layer widths: the first ``n_hidden + 1`` of the run's five distinct widths in 2..11 (non-square, so
    transposes show), then the output (the fifth, or ``d_out``). Same place, same shape in every check."""
    widths = [int(w) for w in _shape_rng(ctx).permutation(np.arange(2, 12))[:5]]
    return [*widths[: n_hidden + 1], widths[4] if d_out is None else d_out]


def shared_batch(ctx: Ctx) -> int:
    """The run's batch size (16..40), the same in every check."""
    rng = _shape_rng(ctx)
    rng.permutation(10)  # after the widths' draw
    return int(rng.integers(16, 41))


def params(rng: np.random.Generator, layer_dims: list[int], bias: float = 0.5) -> dict[str, list[np.ndarray]]:
    """JAX-layout params: W[i] (d_i, d_{i+1}), b[i] (d_{i+1},)."""
    ws, bs = [], []
    for a, b in zip(layer_dims[:-1], layer_dims[1:]):
        ws.append((rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(np.float32))
        bs.append((bias * rng.standard_normal(b)).astype(np.float32))
    return {"W": ws, "b": bs}


def inputs(rng: np.random.Generator, n: int, d: int, scale: float = 2.0) -> np.ndarray:
    return (scale * rng.standard_normal((n, d))).astype(np.float32)


def labels(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, 2, size=n).astype(np.float32)


def np_forward(p: dict, x: np.ndarray) -> np.ndarray:
    """The MLP in float64 numpy (to size logits when building inputs)."""
    h = x.astype(np.float64)
    for w, b in zip(p["W"][:-1], p["b"][:-1]):
        h = np.maximum(h @ w + b, 0.0)
    return h @ p["W"][-1] + p["b"][-1]


def scale_logits(p: dict, x: np.ndarray, largest: float) -> dict:
    """Scales the last layer so that max |logit| is ``largest``."""
    z = np_forward(p, x)[:, 0]
    s = largest / max(float(np.abs(z).max()), 1e-3)
    p["W"][-1] = (p["W"][-1] * s).astype(np.float32)
    p["b"][-1] = (p["b"][-1] * s).astype(np.float32)
    return p


@suite.check(points=2, hidden=False)
def forward_matches_reference(ctx: Ctx) -> None:
    """Same params, same inputs: same logits as the reference."""
    d = shared_dims(ctx, n_hidden=int(ctx.rng.integers(1, 4)))
    case = {"params": params(ctx.rng, d), "x": inputs(ctx.rng, shared_batch(ctx), d[0])}
    got, want = ctx.both("forward", call="mlp_forward(params, x)", **case)
    ctx.assert_close(got, want, kind="forward", what="mlp_forward(params, x)", framework="jax")


@suite.check(points=1, hidden=False)
def bce_loss_matches_reference(ctx: Ctx) -> None:
    """`bce_loss` on ordinary logits equals the reference (the forward is the reference one here)."""
    d = shared_dims(ctx, n_hidden=int(ctx.rng.integers(1, 4)), d_out=1)
    n = shared_batch(ctx)
    x = inputs(ctx.rng, n, d[0])
    p = scale_logits(params(ctx.rng, d), x, float(ctx.rng.uniform(2.0, 4.0)))  # ordinary logits
    case = {"params": p, "x": x, "y": labels(ctx.rng, n)}
    got, want = ctx.both("bce", call="bce_loss(params, x, y)", with_grad=False, **case)
    ctx.assert_close(got["loss"], want["loss"], kind="forward", what="bce_loss(params, x, y)", framework="jax")


@suite.check(points=1, hidden=False)
def init_params_structure(ctx: Ctx) -> None:
    """`init_params` returns {"W": [...], "b": [...]}: W[i] (d_i, d_{i+1}), float32, zero biases."""
    d = shared_dims(ctx, n_hidden=int(ctx.rng.integers(1, 3)))
    got, want = ctx.both("init_structure", call="init_params(layer_dims, key)", layer_dims=d,
                         seed=int(ctx.rng.integers(0, 2**31 - 1)), key_kind="raw")
    check_structure(got, want, d)


def check_structure(got: dict, want: dict, layer_dims: list[int]) -> None:
    """Turns a structure difference into the message that names the fix."""
    if got["W_shapes"] != want["W_shapes"]:
        transposed = [list(reversed(s)) for s in want["W_shapes"]]
        key = "EX04_W_TRANSPOSED" if got["W_shapes"] == transposed else "EX04_W_SHAPES"
        raise Fail(key, dims=list(layer_dims), got=[tuple(s) for s in got["W_shapes"]])
    if got["b_shapes"] != want["b_shapes"]:
        raise Fail("EX04_B_SHAPES", dims=list(layer_dims), got=[tuple(s) for s in got["b_shapes"]])
    if got["dtypes"] != want["dtypes"]:
        bad = sorted({t for t in got["dtypes"] if t != "float32"})
        raise Fail("EX04_INIT_DTYPE", got=", ".join(bad) or "?")
    if not all(got["b_zero"]):
        raise Fail("EX04_BIAS_NONZERO", layer=got["b_zero"].index(False))
