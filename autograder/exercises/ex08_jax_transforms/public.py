"""Public checks of ex08_jax_transforms (shown in the student notebook)."""

from __future__ import annotations

import numpy as np

from autograder.core.i18n import label
from autograder.core.suite import Ctx, Fail, Suite

suite = Suite("ex08_jax_transforms")

KINDS = ("poly", "sin", "exp", "sinx2")
SIMPLE_OPS = ("ops_poly", "ops_dense", "ops_standardise")
NESTED_OPS = ("ops_cond", "ops_scan", "ops_jitted_inner", "ops_relu", "ops_while")


def function_case(rng: np.random.Generator, kind: str, n: int) -> dict:
    """One scalar function of the probe (by kind) with coefficients drawn from `rng`."""
    if kind == "poly":
        coef = [float(c) for c in rng.uniform(-1.0, 1.0, size=5)]
    elif kind == "sin":
        coef = [float(rng.uniform(0.5, 1.5)), float(rng.uniform(-1.0, 1.0))]
    elif kind == "exp":
        coef = [float(rng.uniform(-1.0, 1.0)), float(rng.uniform(0.5, 1.5))]
    else:
        coef = []
    return {"kind": kind, "coef": coef, "n": int(n)}


def points(rng: np.random.Generator, k: int) -> list[float]:
    """`k` evaluation points in [-1.5, 1.5]."""
    return [float(v) for v in rng.uniform(-1.5, 1.5, size=k)]


def fmt_points(xs: list[float]) -> str:
    """Evaluation points, short, for messages."""
    return "[" + ", ".join(f"{v:.4g}" for v in xs) + "]"


def coin_case(rng: np.random.Generator) -> dict:
    """x (N, d), w1 and w2 (d, h), float32."""
    n, d, h = (int(v) for v in rng.integers(2, 7, size=3))
    return {"x": rng.standard_normal((n, d)).astype(np.float32),
            "w1": rng.standard_normal((d, h)).astype(np.float32),
            "w2": rng.standard_normal((d, h)).astype(np.float32)}


def ops_args(rng: np.random.Generator, name: str) -> list[np.ndarray]:
    """Arguments for one of the probe's `ops_*` functions (random sizes)."""
    k = int(rng.integers(2, 7))
    x = rng.standard_normal(k).astype(np.float32)
    if name == "ops_dense":
        return [x, rng.standard_normal((k, int(rng.integers(2, 5)))).astype(np.float32)]
    return [x]


@suite.check(points=1, hidden=False)
def nth_derivative_matches_reference(ctx: Ctx) -> None:
    """n = 0..3 of polynomials, sin, exp and sin(x)·x² at random points."""
    cases = [function_case(ctx.rng, kind, n) for kind in KINDS for n in range(4)]
    xs = points(ctx.rng, 3)
    got, want = ctx.both("nth", call="nth_derivative(f, n)(x)", cases=cases, xs=xs)
    for case, g, w in zip(cases, got, want):
        ctx.assert_close(g, w, kind="forward", framework="jax",
                         what=label("ex08.what.at_points", call=f"nth_derivative({case['kind']}, {case['n']})(x)",
                                    x=fmt_points(xs)))


@suite.check(points=1, hidden=False)
def coin_net_branch_agreement(ctx: Ctx) -> None:
    """For 32 keys: relu(x @ w1) exactly when jax.random.bernoulli(key) is True, else sigmoid(x @ w2)."""
    case = coin_case(ctx.rng)
    n_keys = 32
    got, want = ctx.both("coin_keys", call="coin_net(x, key, w1, w2)", seed=int(ctx.rng.integers(2**31)),
                         n_keys=n_keys, **case)
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        ctx.assert_close(got, want, kind="forward", what=label("ex08.what.for_keys", call="coin_net(x, key, w1, w2)", n=n_keys), framework="jax")
    bad = 0
    for i in range(n_keys):
        try:
            ctx.assert_close(got[i], want[i], kind="forward", what="coin_net", framework="jax")
        except Fail:
            bad += 1
    if bad:
        raise Fail("EX08_BRANCH", bad=bad, total=n_keys)


@suite.check(points=1, hidden=False)
def count_ops_simple(ctx: Ctx) -> None:
    """Functions without sub-jaxprs: the number of equations of the jaxpr."""
    cases = [[name, ops_args(ctx.rng, name)] for name in SIMPLE_OPS]
    got, want = ctx.both("count_ops", call="count_ops(f, *args)", cases=cases)
    for (name, _), g, w in zip(cases, got, want):
        if g != w:
            raise Fail("EX08_COUNT_OPS", name=name, got=g)
