"""Hidden suite of ex08_jax_transforms (nested grad, cond, jaxprs, explicit keys): the public checks, then these."""

from __future__ import annotations

import math

import numpy as np

from autograder.core.i18n import label
from autograder.core.masks import whole_lines
from autograder.core.suite import Ctx, Fail, StudentProblem, Suite
from autograder.exercises.ex08_jax_transforms.public import (
    KINDS,
    NESTED_OPS,
    coin_case,
    fmt_points,
    function_case,
    ops_args,
    points,
)
from autograder.exercises.ex08_jax_transforms.public import suite as _public
from autograder.probing.artefact import ProgramTooLarge, read_stablehlo

suite = Suite("ex08_jax_transforms", checks=list(_public.checks))

# Dropout checks use one input shape, so the student's worker compiles the
# random-bit generation once. 100,000 elements.
DROPOUT_SHAPE = (200, 500)
# Two-sided normal tail beyond 5.5 standard deviations: 3.8e-8, the chance
# that a correct dropout fails the keep-rate check (binomial, n = 1e5, the
# normal approximation is excellent at these n and p in [0.15, 0.85]).
KEEP_RATE_Z = 5.5
# Kept values must equal x / (1 - rate) within a few float32 ulps (6e-8 each).
SCALE_RTOL = 1e-6
# At rate 0, elements a correct `uniform(key, shape) > rate` mask drops (draws of exactly 0.0), at most.
RATE0_ZEROS = 3


def _python_if(err: StudentProblem) -> bool:
    return err.key == "CALL_EXCEPTION" and any(
        name in str(err.fields.get("error", "")) for name in ("TracerBoolConversionError", "ConcretizationTypeError"))


@suite.check(points=1)
def nth_derivative_jit(ctx: Ctx) -> None:
    """`jax.jit(nth_derivative(f, n))` works and gives the same values (n = 1..3)."""
    kinds = [str(k) for k in ctx.rng.choice(KINDS, size=3, replace=False)]
    cases = [function_case(ctx.rng, kind, n) for kind, n in zip(kinds, ctx.rng.permutation([1, 2, 3]))]
    xs = points(ctx.rng, 2)
    try:
        got = ctx.student("nth_jit", call="jax.jit(nth_derivative(f, n))(x)", cases=cases, xs=xs)
    except StudentProblem as err:
        if err.key == "CALL_EXCEPTION":
            raise Fail("EX08_NTH_JIT", error=err.fields.get("error", "")) from None
        raise
    want = ctx.reference("nth", cases=cases, xs=xs)
    for case, g, w in zip(cases, got, want):
        ctx.assert_close(g, w, kind="forward", framework="jax",
                         what=label("ex08.what.at_points", call=f"jax.jit(nth_derivative({case['kind']}, {case['n']}))(x)",
                                    x=fmt_points(xs)))


@suite.check(points=1)
def coin_net_under_jit(ctx: Ctx) -> None:
    """`jax.jit(coin_net)` with the key traced runs and agrees with the reference on 32 keys."""
    case = coin_case(ctx.rng)
    seed = int(ctx.rng.integers(2**31))
    try:
        got = ctx.student("coin_jit", call="jax.jit(coin_net)(x, key, w1, w2)", seed=seed, n_keys=32, **case)
    except StudentProblem as err:
        if _python_if(err):
            raise Fail("EX08_PYTHON_IF", error=err.fields.get("error", "")) from None
        raise
    want = ctx.reference("coin_keys", seed=seed, n_keys=32, **case)
    ctx.assert_close(got, want, kind="forward", what=label("ex08.what.for_keys", call="jax.jit(coin_net)(x, key, w1, w2)", n=32),
                     framework="jax")


@suite.check(points=1)
def coin_net_uses_cond(ctx: Ctx) -> None:
    """The program jax.jit(coin_net) compiles holds a branch (`lax.cond`: only one branch runs), read here, in
    the grader, from its StableHLO text; that same program, compiled, gives what coin_net returns."""
    case = coin_case(ctx.rng)
    seed = int(ctx.rng.integers(2**31))
    try:
        got = ctx.student("coin_program", call="jax.jit(coin_net).lower(x, key, w1, w2)", seed=seed, n_keys=4,
                          **case)
    except StudentProblem as err:
        if _python_if(err):
            raise Fail("EX08_PYTHON_IF", error=err.fields.get("error", "")) from None
        raise
    # the program read below is the one coin_net runs: its outputs are what coin_net itself returns
    mine = ctx.student("coin_keys", call="coin_net(x, key, w1, w2)", seed=seed, n_keys=4, **case)
    ctx.assert_close(got["outs"], mine, kind="forward", what=label("ex08.what.compiled_keys", n=4),
                     framework="jax")
    try:
        program = read_stablehlo(got["program"])
    except (ProgramTooLarge, TypeError):
        raise Fail("EX08_NO_COND") from None
    if not program.branches:
        raise Fail("EX08_NO_COND")


@suite.check(points=1.5)
def count_ops_nested(ctx: Ctx) -> None:
    """cond, scan, while, a jitted inner function, relu (custom_jvp): each is ONE top-level equation."""
    cases = [[name, ops_args(ctx.rng, name)] for name in NESTED_OPS]
    got, want = ctx.both("count_ops", call="count_ops(f, *args)", cases=cases)
    for (name, _), g, w in zip(cases, got, want):
        if g != w:
            raise Fail("EX08_COUNT_OPS_NESTED", name=name, got=g)


def _dropout_input(rng: np.random.Generator) -> np.ndarray:
    """No zeros: |x| in [0.5, 2], random signs, so a 0 in the output is always a dropped element."""
    mag = rng.uniform(0.5, 2.0, size=DROPOUT_SHAPE)
    return (mag * rng.choice([-1.0, 1.0], size=DROPOUT_SHAPE)).astype(np.float32)


def _check_shape(out: np.ndarray, x: np.ndarray) -> None:
    if out.shape != x.shape or out.dtype != x.dtype:
        raise Fail("EX08_DROPOUT_SHAPE", got=f"{out.dtype}{list(out.shape)}", want=f"{x.dtype}{list(x.shape)}")


@suite.check(points=0.5)
def dropout_keep_rate(ctx: Ctx) -> None:
    """Each element is kept on its own (no whole rows or columns: autograder.core.masks), and the fraction of kept
    elements is 1 - rate (within 5.5 standard deviations of the binomial)."""
    x = _dropout_input(ctx.rng)
    rate = float(ctx.rng.choice([ctx.rng.uniform(0.15, 0.35), ctx.rng.uniform(0.65, 0.85)]))
    out = np.asarray(ctx.student("dropout", call=f"dropout(x, {rate:.3f}, key)", x=x, rate=rate,
                                 seed=int(ctx.rng.integers(2**31))))
    _check_shape(out, x)
    p, n = 1.0 - rate, x.size
    kept = float(np.mean(out != 0))
    if whole_lines(np.ones(out.shape, dtype=bool), out == 0):  # x has no zeros: a 0 is a drop
        raise Fail("EX08_DROPOUT_SHARED")
    if abs(kept - p) > KEEP_RATE_Z * math.sqrt(p * (1.0 - p) / n):
        raise Fail("EX08_KEEP_RATE", kept=kept, rate=rate)


@suite.check(points=1)
def dropout_values(ctx: Ctx) -> None:
    """Every element is exactly 0 or x / (1 - rate); rate = 0 returns x unchanged."""
    x = _dropout_input(ctx.rng)
    rate = float(ctx.rng.uniform(0.1, 0.9))
    out = np.asarray(ctx.student("dropout", call=f"dropout(x, {rate:.3f}, key)", x=x, rate=rate,
                                 seed=int(ctx.rng.integers(2**31))))
    _check_shape(out, x)
    scaled = x.astype(np.float64) / (1.0 - rate)
    ok = (out == 0) | (np.abs(out - scaled) <= SCALE_RTOL * np.abs(scaled))
    if not ok.all():
        raise Fail("EX08_DROPOUT_SCALE", bad=int((~ok).sum()), total=x.size, rate=rate)
    same = np.asarray(ctx.student("dropout", call="dropout(x, 0.0, key)", x=x, rate=0.0,
                                  seed=int(ctx.rng.integers(2**31))))
    _check_shape(same, x)
    changed = same != x
    # at rate 0 every element is x itself, but a mask drawn as `uniform(key) > rate` (a common idiom, right for
    # every rate) also drops the draws that are exactly 0.0: probability 2**-23 each, a zero in about 1 run in 80
    # over these 1e5 elements; more than RATE0_ZEROS of them (Poisson, mean 0.012: 8e-10) is a real drop
    if changed.any() and not (np.all(same[changed] == 0) and int(changed.sum()) <= RATE0_ZEROS):
        raise Fail("EX08_DROPOUT_IDENTITY", bad=int(changed.sum()), total=x.size)


@suite.check(points=0.5)
def dropout_deterministic(ctx: Ctx) -> None:
    """Same key -> identical output; different keys -> different masks."""
    x = _dropout_input(ctx.rng)
    rate = float(ctx.rng.uniform(0.3, 0.7))
    s1, s2 = (int(s) for s in ctx.rng.choice(2**31, size=2, replace=False))
    a, b, c = (np.asarray(o) for o in ctx.student("dropout_seeds", call="dropout(x, rate, key)", x=x, rate=rate,
                                                  seeds=[s1, s1, s2]))
    if not np.array_equal(a, b):
        raise Fail("EX08_DROPOUT_NOT_DETERMINISTIC")
    # Two independent masks of 1e5 elements agree everywhere with probability < 0.58**1e5 = 0.
    if np.array_equal(a != 0, c != 0):
        raise Fail("EX08_DROPOUT_IGNORES_KEY")


@suite.check(points=0.5)
def dropout_no_numpy_rng(ctx: Ctx) -> None:
    """numpy's global RNG is neither used nor re-seeded: re-seeding it does not change the output."""
    x = _dropout_input(ctx.rng)
    rate = float(ctx.rng.uniform(0.3, 0.7))
    np_seeds = [int(s) for s in ctx.rng.choice(2**31, size=2, replace=False)]
    got = ctx.student("dropout_numpy", call="dropout(x, rate, key)", x=x, rate=rate,
                      seed=int(ctx.rng.integers(2**31)), np_seeds=np_seeds)
    if got["touched"] or not got["same"]:
        raise Fail("EX08_NUMPY_RNG")
