"""Public checks of ex01_torch_mlp (shown in the student notebook)."""

from __future__ import annotations

import numpy as np

from autograder.core.suite import Ctx, Fail, Suite

suite = Suite("ex01_torch_mlp")


def _config(rng: np.random.Generator, n_hidden: int | None = None) -> tuple[int, list[int], int]:
    """Non-square dims so transposes and orders show."""
    n_hidden = int(rng.integers(1, 4)) if n_hidden is None else n_hidden
    dims = [int(d) for d in rng.choice(np.arange(2, 12), size=n_hidden + 2, replace=False)]
    return dims[0], dims[1:-1], dims[-1]


def _params(rng: np.random.Generator, dims: list[int]) -> list[np.ndarray]:
    out = []
    for a, b in zip(dims[:-1], dims[1:]):
        out.append((rng.standard_normal((b, a)) / np.sqrt(a)).astype(np.float32))
        out.append((0.5 * rng.standard_normal(b)).astype(np.float32))
    return out


def random_case(ctx: Ctx, n_hidden: int | None = None, n: int = 16) -> dict:
    """A random MLP and batch from ``ctx.rng`` (also the hidden suite's).

    Args:
        ctx: The check's context (its ``rng`` draws everything).
        n_hidden: How many hidden layers; ``None``: drawn.
        n: The batch's rows.

    Returns:
        The contract's keyword arguments: ``input_dim``, ``hidden_dims``, ``output_dim``, ``params``, ``x``.
    """
    i, h, o = _config(ctx.rng, n_hidden)
    x = (2.0 * ctx.rng.standard_normal((n, i))).astype(np.float32)
    return {"input_dim": i, "hidden_dims": h, "output_dim": o, "params": _params(ctx.rng, [i, *h, o]), "x": x}


@suite.check(points=2, hidden=False)
def parameter_shapes_in_order(ctx: Ctx) -> None:
    """`parameters()` lists weight (out, in) then bias (out,) per layer, in order."""
    case = random_case(ctx)
    args = {k: case[k] for k in ("input_dim", "hidden_dims", "output_dim")}
    got, want = ctx.both("param_shapes", call="MLP(...).parameters()", **args)
    if [list(s) for s in got] != [list(s) for s in want]:
        raise Fail("EX01_PARAM_SHAPES", call="MLP(...).parameters()", got=[tuple(s) for s in got])


def _diagnose(ctx: Ctx, case: dict, got: np.ndarray, want: np.ndarray) -> None:
    """Names the bug when the output is what a known wrong model computes on the same weights (an
    activation after the last layer, none between the layers): a fix to act on, never a value.

    Args:
        ctx: the check's context (its tolerance).
        case: the inputs (``params``: weight ``(out, in)`` then bias ``(out,)`` per layer; ``x``: ``(N, in)``).
        got: the student's output, ``(N, out)``.
        want: the reference's, ``(N, out)``.
    """
    g, w = np.asarray(got), np.asarray(want, dtype=np.float64)
    if g.shape != w.shape:
        return
    linear = case["x"].astype(np.float64)
    for weight, bias in zip(case["params"][0::2], case["params"][1::2]):
        linear = linear @ weight.astype(np.float64).T + bias
    wrong = (("EX01_LOGITS", np.maximum(w, 0.0)), ("EX01_LOGITS", 0.5 * (1.0 + np.tanh(0.5 * w))),
             ("EX01_NO_HIDDEN_RELU", linear))
    for key, out in wrong:
        if ctx.difference(got, out.astype(np.asarray(want).dtype), kind="forward") is None:
            raise Fail(key, call="MLP.forward")


@suite.check(points=3, hidden=False)
def forward_matches_reference(ctx: Ctx) -> None:
    """Same weights, same inputs: same logits as the reference."""
    case = random_case(ctx)
    got, want = ctx.both("forward", call="MLP.forward", **case)
    if ctx.difference(got, want, kind="forward"):
        _diagnose(ctx, case, got, want)
    ctx.assert_close(got, want, kind="forward", what="MLP.forward")
