"""Hidden suite of ex03_torch_cnn (a channels-first CNN with dropout): the public checks, then these."""

from __future__ import annotations

from typing import Any

import numpy as np

from autograder.core.i18n import label
from autograder.core.masks import whole_lines
from autograder.core.suite import Ctx, Fail, StudentProblem, Suite
from autograder.core.tolerances import tolerance
from autograder.exercises.ex03_torch_cnn.public import cnn_params, images, num_classes
from autograder.exercises.ex03_torch_cnn.public import suite as _public

suite = Suite("ex03_torch_cnn", checks=list(_public.checks))

DEFAULT_DROPOUT = 0.3  # CNN()'s contract default


def _close(ctx: Ctx, got: Any, want: Any, kind: str) -> bool:
    try:
        ctx.assert_close(got, want, kind=kind, what="")
    except Fail:
        return False
    return True


def _case(ctx: Ctx, args: list | dict, n: int) -> dict[str, Any]:
    """Weights for 10 classes (dropout checks do not depend on num_classes), images, a dropout seed."""
    return {"args": args, "params": cnn_params(ctx.rng, 10), "x": images(ctx.rng, n),
            "seed": int(ctx.rng.integers(0, 2**31 - 1))}


def _judge_dropout(ctx: Ctx, got: dict[str, np.ndarray], p: float, rate_key: str) -> None:
    """The train-mode input of the last Linear must be its eval-mode input with each unit
    either zeroed or multiplied by one common factor 1/(1-p), about a fraction p zeroed.

    Statistics: n active units (~2000 with 64 images x 64 units); the zeroed fraction of a
    correct Dropout(p) has std sqrt(p(1-p)/n) (about 0.01); the band max(0.06, 6 std) is
    >= 6 std wide, so a correct model fails with probability < 1e-8.
    """
    h_eval, h_train = got["eval"].astype(np.float64), got["train"].astype(np.float64)
    if h_eval.shape != h_train.shape:
        raise Fail("EX03_DROPOUT_PLACE")
    tol = tolerance("forward", ctx.backend("torch"))
    active = np.abs(h_eval) > 1e-3
    dropped = np.abs(h_train) <= tol.atol
    # Units off in eval() (ReLU zeros) stay (about) off: no later layer mixes a mask in.
    if not active.any() or np.any(np.abs(h_train[~active]) > 1e-2):
        raise Fail("EX03_DROPOUT_PLACE")
    kept = active & ~dropped
    ratios = h_train[kept] / h_eval[kept]
    factor = float(np.median(ratios)) if ratios.size else 0.0
    if ratios.size and np.any(np.abs(ratios - factor) > tol.rtol * abs(factor) + tol.atol):
        raise Fail("EX03_DROPOUT_PLACE")  # not a per-unit mask: mixed by a layer after the dropout
    if whole_lines(active, dropped):
        raise Fail("EX03_DROPOUT_SHARED")
    n = int(active.sum())
    frac = float(np.mean(dropped[active]))
    band = max(0.06, 6.0 * float(np.sqrt(p * (1.0 - p) / n)))
    if abs(frac - p) > band:
        raise Fail(rate_key, p=f"{p:.2f}", got=f"{frac:.2f}")
    if ratios.size and abs(factor * (1.0 - p) - 1.0) > 1e-3:
        raise Fail("EX03_DROPOUT_SCALE", p=f"{p:.2f}")


@suite.check(points=1)
def eval_is_deterministic(ctx: Ctx) -> None:
    """In eval() mode two calls on the same input give the same output (dropout off)."""
    case = _case(ctx, [10, float(ctx.rng.uniform(0.3, 0.7))], n=8)
    got = ctx.student("outputs", call="CNN.eval().forward", **case)
    if not _close(ctx, got["eval"][0], got["eval"][1], "exact"):
        raise Fail("EX03_EVAL_RANDOM")


@suite.check(points=1)
def dropout_acts_in_train_mode(ctx: Ctx) -> None:
    """train() mode: with dropout > 0 two calls differ; with dropout=0.0 train() equals eval()."""
    case = _case(ctx, [10, float(ctx.rng.uniform(0.4, 0.7))], n=16)
    got = ctx.student("outputs", call="CNN.train().forward", **case)
    if _close(ctx, got["train"][0], got["train"][1], "forward"):
        raise Fail("EX03_NO_DROPOUT")
    case = _case(ctx, [10, 0.0], n=16)
    got = ctx.student("outputs", call="CNN(10, 0.0).train().forward", **case)
    if not _close(ctx, got["train"][0], got["eval"][0], "forward"):
        raise Fail("EX03_DROPOUT_ZERO")


@suite.check(points=1)
def dropout_before_last_linear(ctx: Ctx) -> None:
    """train() mode: the last Linear sees the eval() features with a fraction p zeroed, the rest x 1/(1-p)."""
    p = float(ctx.rng.uniform(0.65, 0.8))  # far from 0.3 and 0.5, so a fixed rate shows
    case = _case(ctx, [10, p], n=64)
    got = ctx.student("last_linear_input", call=f"CNN(10, {p:.2f}).train().forward", **case)
    _judge_dropout(ctx, got, p, "EX03_DROPOUT_RATE")


@suite.check(points=0.5)
def default_arguments(ctx: Ctx) -> None:
    """`CNN()` has 10 classes and dropout 0.3."""
    got, want = ctx.both("param_shapes", call="CNN().parameters()", args=[])
    got_shapes, want_shapes = [tuple(s) for s in got], [tuple(s) for s in want]
    if got_shapes != want_shapes:
        if got_shapes[:-2] == want_shapes[:-2]:
            raise Fail("EX03_DEFAULT_CLASSES", got=got_shapes[-2:])
        raise Fail("EX03_PARAM_SHAPES", call="CNN().parameters()", got=got_shapes)
    got = ctx.student("last_linear_input", call="CNN().train().forward", **_case(ctx, [], n=64))
    _judge_dropout(ctx, got, DEFAULT_DROPOUT, "EX03_DEFAULT_DROPOUT")


@suite.check(points=1)
def gradients_flow(ctx: Ctx) -> None:
    """Backward through the tape reaches every parameter with the reference's gradients: in eval mode, then in
    train mode with dropout on (one seed for both sides: where both drew the same mask, the same gradients). A
    backward that fails in train mode only (dropout with inplace=True after a ReLU) is the student's."""
    k = num_classes(ctx.rng)
    x = images(ctx.rng, int(ctx.rng.integers(3, 9)))
    case = {"args": [k, float(ctx.rng.uniform(0.1, 0.6))], "params": cnn_params(ctx.rng, k), "x": x,
            "w": ctx.rng.standard_normal((x.shape[0], k)).astype(np.float32)}
    got, want = ctx.both("gradients", call="CNN.forward(...).backward()", **case)
    ctx.assert_close(got, want, kind="step", what=label("what.param_grads"))
    seed = int(ctx.rng.integers(0, 2**31 - 1))
    got, want = ctx.both("train_gradients", call="CNN.train().forward(...).backward()", seed=seed, **case)
    # a dropout written by hand draws its mask with other random calls: its gradients are its own mask's
    if np.array_equal(got["zeros"], want["zeros"]):
        ctx.assert_close(got["grads"], want["grads"], kind="step", what=label("ex03.what.train_grads"))


@suite.check(points=0.5)
def constructor_by_keyword(ctx: Ctx) -> None:
    """`CNN(num_classes=k, dropout=p)` called by keyword (the stub's parameter names): k outputs, and dropout
    at rate p before the last Linear."""
    k, p = num_classes(ctx.rng), float(ctx.rng.uniform(0.65, 0.8))
    call = f"CNN(num_classes={k}, dropout={p:.2f})"
    try:
        got, want = ctx.both("param_shapes", call=f"{call}.parameters()", args={"num_classes": k, "dropout": p})
    except StudentProblem as err:
        if err.key != "CALL_EXCEPTION":
            raise
        raise Fail("EX03_KEYWORDS", call=call, error=err.fields.get("error", "")) from None
    if [list(s) for s in got] != [list(s) for s in want]:
        raise Fail("EX03_PARAM_SHAPES", call=f"{call}.parameters()", got=[tuple(s) for s in got])
    got = ctx.student("last_linear_input", call=f"CNN(num_classes=10, dropout={p:.2f}).train().forward",
                      **_case(ctx, {"num_classes": 10, "dropout": p}, n=64))
    _judge_dropout(ctx, got, p, "EX03_DROPOUT_RATE")
