"""Hidden suite of ex01_torch_mlp (an nn.Module MLP)."""

from __future__ import annotations

import numpy as np

from autograder._suite import Ctx, Fail, StudentProblem, Suite

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


def _case(ctx: Ctx, n_hidden: int | None = None, n: int = 16) -> dict:
    i, h, o = _config(ctx.rng, n_hidden)
    x = (2.0 * ctx.rng.standard_normal((n, i))).astype(np.float32)
    return {"input_dim": i, "hidden_dims": h, "output_dim": o, "params": _params(ctx.rng, [i, *h, o]), "x": x}


@suite.check(points=2, hidden=False)
def parameter_shapes_in_order(ctx: Ctx) -> None:
    """`parameters()` lists weight (out, in) then bias (out,) per layer, in order."""
    case = _case(ctx)
    args = {k: case[k] for k in ("input_dim", "hidden_dims", "output_dim")}
    got, want = ctx.both("param_shapes", call="MLP(...).parameters()", **args)
    if [list(s) for s in got] != [list(s) for s in want]:
        raise Fail("EX01_PARAM_SHAPES", call="MLP(...).parameters()", got=[tuple(s) for s in got])


@suite.check(points=3)
def forward_matches_reference(ctx: Ctx) -> None:
    """Same weights, same inputs: same logits as the reference."""
    case = _case(ctx)
    got, want = ctx.both("forward", call="MLP.forward", **case)
    ctx.assert_close(got, want, kind="forward", what="MLP.forward")


@suite.check(points=1)
def output_is_logits(ctx: Ctx) -> None:
    """No activation after the last layer: outputs take negative values."""
    case = _case(ctx, n=64)
    case["params"][-1] = case["params"][-1] - 1.0  # push outputs below zero
    got, want = ctx.both("forward", call="MLP.forward", **case)
    if np.min(want) < 0 and np.min(got) >= 0:
        raise Fail("EX01_LOGITS")


@suite.check(points=1)
def empty_hidden_dims(ctx: Ctx) -> None:
    """`hidden_dims=[]` gives a single linear layer."""
    case = _case(ctx, n_hidden=0)
    got, want = ctx.both("forward", call="MLP(d, [], k).forward", **case)
    ctx.assert_close(got, want, kind="forward", what="MLP(d, [], k).forward")


@suite.check(points=1)
def works_on_any_device(ctx: Ctx) -> None:
    """After `.to("meta")` forward still runs (nothing created on a fixed device)."""
    case = _case(ctx)
    try:
        got = ctx.student("meta_device", call="MLP.to('meta').forward", input_dim=case["input_dim"],
                          hidden_dims=case["hidden_dims"], output_dim=case["output_dim"], n=4)
    except StudentProblem as err:
        if err.key == "CALL_EXCEPTION":
            raise Fail("EX01_FIXED_DEVICE", error=err.fields.get("error", "")) from None
        raise
    if got["device"] != "meta":
        raise Fail("EX01_DEVICE_OUT", got=got["device"])


@suite.check(points=2)
def gradients_flow(ctx: Ctx) -> None:
    """Backward through the tape reaches every parameter with the reference's gradients."""
    case = _case(ctx)
    case["w"] = ctx.rng.standard_normal((case["x"].shape[0], case["output_dim"])).astype(np.float32)
    got, want = ctx.both("gradients", call="MLP.forward(...).backward()", **case)
    ctx.assert_close(got, want, kind="step", what="gradients of the parameters")
