"""Public checks of ex11_torch_compile (shown in the student notebook)."""

from __future__ import annotations

import math

import numpy as np

from autograder.core.i18n import label
from autograder.core.suite import Ctx, Fail, Suite

suite = Suite("ex11_torch_compile")

# Distinct batch sizes above every input width used here (d <= 7): Dynamo specialises sizes 0 and 1 even
# with dynamic shapes, and "duck sizing" ties a first batch size equal to the input width to that width
# (measured: 3 seeds in 50 recompiled with d == first batch size when sizes started at 2).
MIN_BATCH, MAX_BATCH = 8, 40


def clip_case(rng: np.random.Generator, above: bool) -> dict:
    """A tensor of 2 or 3 axes and a max_norm its global norm is above (or below) by a clear factor."""
    ndim = int(rng.integers(2, 4))
    shape = tuple(int(v) for v in rng.integers(2, 7, size=ndim))
    x = rng.standard_normal(shape)
    max_norm = float(rng.uniform(0.5, 5.0))
    ratio = rng.uniform(1.5, 8.0) if above else rng.uniform(0.1, 0.8)
    x = x * (ratio * max_norm / np.linalg.norm(x))
    return {"x": x.astype(np.float32), "max_norm": max_norm}


def mlp_params(rng: np.random.Generator, d: int, h: int, k: int) -> list[np.ndarray]:
    """torch layout ``[w1 (h, d), b1 (h,), w2 (k, h), b2 (k,)]``, PyTorch's default init scale."""
    out = []
    for fan_in, fan_out in ((d, h), (h, k)):
        bound = 1.0 / np.sqrt(fan_in)
        out.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        out.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    return out


def batch_sizes(rng: np.random.Generator, distinct: int) -> list[int]:
    """The first size twice, then ``distinct - 1`` new ones."""
    sizes = [int(v) for v in rng.choice(np.arange(MIN_BATCH, MAX_BATCH + 1), size=distinct, replace=False)]
    return [sizes[0]] + sizes


def step_case(rng: np.random.Generator, steps: int) -> dict:
    """An MLP (with BatchNorm) regression problem: weights, and one batch given to each of ``steps`` steps
    (full-batch training, as in exercise 02: a loss returned after the update then shows as the next one)."""
    d, h, k = int(rng.integers(2, 6)), int(rng.integers(4, 12)), int(rng.integers(1, 4))
    n = int(rng.integers(8, 32))
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = rng.standard_normal((n, k)).astype(np.float32)
    return {"params": mlp_params(rng, d, h, k), "xs": [x] * steps, "ys": [y] * steps}


def check_step_losses(ctx: Ctx, got: list[float], want: list[float], what: dict) -> None:
    """The losses must match; a first loss equal to the reference's second means 'loss after the update'; losses
    that match for the first update and drift later mean something carried over between calls (``.grad``)."""
    if len(got) == len(want) >= 2 and abs(got[0] - want[0]) > 1e-4 + 1e-3 * abs(want[0]) \
            and abs(got[0] - want[1]) <= 1e-4 + 1e-3 * abs(want[1]):
        raise Fail("EX11_LOSS_AFTER_UPDATE")
    start = ctx.drift_start(got, want, kind="steps")
    if start is not None:
        raise Fail("EX11_ZERO_GRAD", what=what, step=start)
    ctx.assert_close(got, want, kind="steps", what=what)


def _clip_values(ctx: Ctx, case: dict, what: dict) -> None:
    got, want = ctx.both("clip", call="clip_by_norm(x, max_norm)", **case)
    if got["mutated"]:
        raise Fail("EX11_CLIP_IN_PLACE")
    ctx.assert_close(got["out"], want["out"], kind="forward", what=what)


@suite.check(points=1, hidden=False)
def clip_matches_reference(ctx: Ctx) -> None:
    """clip_by_norm on tensors above and below max_norm, and on zeros, matches the reference."""
    _clip_values(ctx, clip_case(ctx.rng, above=True), label("ex11.what.clip_side", side=">"))
    _clip_values(ctx, clip_case(ctx.rng, above=False), label("ex11.what.clip_side", side="<"))
    zeros = clip_case(ctx.rng, above=False)
    zeros["x"] = np.zeros_like(zeros["x"])
    got, want = ctx.both("clip", call="clip_by_norm(zeros, max_norm)", **zeros)
    if not np.isfinite(got["out"]).all() or ctx.difference(got["out"], want["out"], kind="forward"):
        raise Fail("EX11_CLIP_ZEROS")


@suite.check(points=1, hidden=False)
def clip_compiles_fullgraph(ctx: Ctx) -> None:
    """torch.compile(clip_by_norm, fullgraph=True, backend="eager") accepts it and gives the same values."""
    for above in (True, False):
        case = clip_case(ctx.rng, above=above)
        got, want = ctx.both("clip_fullgraph", call='torch.compile(clip_by_norm, fullgraph=True, backend="eager")',
                             **case)
        if not got["ok"]:
            raise Fail("EX11_GRAPH_BREAK", error=got["error"])
        ctx.assert_close(got["out"], want["out"], kind="forward", what=label("ex11.what.compiled_clip"))


REPORT_LABEL = {
    "clean": "a function without graph breaks", "seed_clip": "the seed's clip (a Python if on x.norm())",
    "two_breaks": "a function with two torch._dynamo.graph_break() calls",
    "loop": "a loop with a graph break in each pass", "item": "a function calling .item()",
    "branch": "a Python if on a tensor's sum",
}


def report_case(ctx: Ctx, fn: str) -> None:
    """``graph_report`` on one of the probe's functions must give what the reference gives."""
    x = ctx.rng.standard_normal(tuple(int(v) for v in ctx.rng.integers(2, 6, size=2))).astype(np.float32)
    # in Python floats (exactly rounded sum): a float32 norm times a float is float32 under numpy 2 and float64
    # under 1.x, and BLAS sums in its own order; this value is part of the snapshot's key
    norm = math.sqrt(math.fsum(v * v for v in x.ravel().tolist()))
    extra = [norm * float(ctx.rng.uniform(0.2, 0.8))] if fn == "seed_clip" else []
    got, want = ctx.both("graph_report", call="graph_report(fn, *args)", fn=fn, x=x, extra=extra)
    if got != want:
        if got == want[::-1]:
            raise Fail("EX11_REPORT_SWAPPED", fn=REPORT_LABEL[fn])
        raise Fail("EX11_REPORT_MISMATCH", fn=REPORT_LABEL[fn], got=f"({got[0]}, {got[1]})")


@suite.check(points=1, hidden=False)
def graph_report_counts(ctx: Ctx) -> None:
    """graph_report gives explain's (graph_count, graph_break_count): the seed's clip and a clean function."""
    for fn in ("seed_clip", "clean"):
        report_case(ctx, fn)


def any_batch_case(ctx: Ctx, distinct: int) -> dict:
    d, h, k = int(ctx.rng.integers(2, 8)), int(ctx.rng.integers(4, 16)), int(ctx.rng.integers(1, 4))
    xs = [ctx.rng.standard_normal((n, d)).astype(np.float32) for n in batch_sizes(ctx.rng, distinct)]
    return {"params": mlp_params(ctx.rng, d, h, k), "xs": xs}


@suite.check(points=1, hidden=False)
def any_batch_matches_model(ctx: Ctx) -> None:
    """compile_for_any_batch(model, "eager") gives the model's outputs for several batch sizes."""
    case = any_batch_case(ctx, 3)
    got, want = ctx.both("any_batch", call='compile_for_any_batch(model, "eager")(x)', backend="eager", **case)
    for i, (g, w) in enumerate(zip(got["outs"], want["outs"], strict=True)):
        ctx.assert_close(g, w, kind="forward", what=label("ex11.what.compiled_out", i=i + 1, n=len(w)))


@suite.check(points=1, hidden=False)
def compiled_step_matches_eager(ctx: Ctx) -> None:
    """4 steps of compiled_train_step (backend "aot_eager", SGD with momentum): losses and parameters."""
    case = step_case(ctx.rng, 4)
    lr = float(ctx.rng.uniform(0.1, 0.3))
    got, want = ctx.both("train", call=label("ex11.call.step_from", backend="aot_eager"),
                         opt="sgd", lr=lr, backend="aot_eager", **case)
    check_step_losses(ctx, got["losses"], want["losses"], label("ex11.what.step_losses", n=4))
    ctx.assert_close(got["state"], want["state"], kind="steps", what=label("ex11.what.params_after", n=4))
