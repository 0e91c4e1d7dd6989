"""Hidden suite of ex01_torch_mlp (an nn.Module MLP): the public checks, then these."""

from __future__ import annotations

import numpy as np

from autograder.core.i18n import label
from autograder.core.suite import Ctx, Fail, StudentProblem, Suite
from autograder.exercises.ex01_torch_mlp.public import random_case
from autograder.exercises.ex01_torch_mlp.public import suite as _public

suite = Suite("ex01_torch_mlp", checks=list(_public.checks))


@suite.check(points=1)
def output_is_logits(ctx: Ctx) -> None:
    """No activation after the last layer: outputs take negative values."""
    case = random_case(ctx, n=64)
    case["params"][-1] = case["params"][-1] - 1.0  # push outputs below zero
    got, want = ctx.both("forward", call="MLP.forward", **case)
    if np.min(want) < 0 and np.min(got) >= 0:
        raise Fail("EX01_LOGITS")


@suite.check(points=1)
def empty_hidden_dims(ctx: Ctx) -> None:
    """`hidden_dims=[]` gives a single linear layer."""
    case = random_case(ctx, n_hidden=0)
    got, want = ctx.both("forward", call="MLP(d, [], k).forward", **case)
    ctx.assert_close(got, want, kind="forward", what="MLP(d, [], k).forward")


@suite.check(points=1)
def works_on_any_device(ctx: Ctx) -> None:
    """After `.to("meta")` forward still runs (nothing created on a fixed device)."""
    case = random_case(ctx)
    try:
        got = ctx.student("meta_device", call="MLP.to('meta').forward", input_dim=case["input_dim"],
                          hidden_dims=case["hidden_dims"], output_dim=case["output_dim"], n=4)
    except StudentProblem as err:
        if err.key == "CALL_EXCEPTION":
            raise Fail("EX01_FIXED_DEVICE", error=err.fields.get("error", "")) from None
        raise
    if got["device"] != "meta":
        raise Fail("EX01_DEVICE_OUT", got=got["device"])


@suite.check(points=1.5)
def gradients_flow(ctx: Ctx) -> None:
    """Backward through the tape reaches every parameter with the reference's gradients."""
    case = random_case(ctx)
    case["w"] = ctx.rng.standard_normal((case["x"].shape[0], case["output_dim"])).astype(np.float32)
    got, want = ctx.both("gradients", call="MLP.forward(...).backward()", **case)
    ctx.assert_close(got, want, kind="step", what=label("what.param_grads"))


@suite.check(points=0.5)
def hidden_dims_any_sequence(ctx: Ctx) -> None:
    """`hidden_dims` is any sequence of ints: given as a tuple, the model is the same."""
    case = random_case(ctx)
    call = f"MLP(d, {tuple(case['hidden_dims'])}, k).forward"
    try:
        got, want = ctx.both("forward_sequence", call=call, **case)
    except StudentProblem as err:
        if err.key == "CALL_EXCEPTION":
            raise Fail("EX01_SEQUENCE", error=err.fields.get("error", "")) from None
        raise
    ctx.assert_close(got, want, kind="forward", what=call)
