"""Public checks of ex12_checkpointing (shown in the student notebook)."""

from __future__ import annotations

import numpy as np

from autograder.core.i18n import label
from autograder.core.suite import Ctx, Fail, Suite

suite = Suite("ex12_checkpointing")


def mlp_case(rng: np.random.Generator, layers: int) -> dict:
    """He-normal MLP params (non-zero biases) with ``layers`` layers, inputs and regression targets."""
    dims = [int(rng.integers(2, 6))] + [int(rng.integers(4, 12)) for _ in range(layers - 1)] + [int(rng.integers(1, 4))]
    params = {"W": [(rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(np.float32)
                    for a, b in zip(dims[:-1], dims[1:])],
              "b": [(0.1 * rng.standard_normal(b)).astype(np.float32) for b in dims[1:]]}
    n = int(rng.integers(4, 24))
    return {"params": params, "x": rng.standard_normal((n, dims[0])).astype(np.float32),
            "y": rng.standard_normal((n, dims[-1])).astype(np.float32)}


def block_weights(rng: np.random.Generator, blocks: int, d: int) -> list[np.ndarray]:
    """``[w0, b0, w1, b1, ...]`` of ``blocks`` square Linear layers (torch layout, default init scale)."""
    bound = 1.0 / np.sqrt(d)
    out = []
    for _ in range(blocks):
        out.append(rng.uniform(-bound, bound, (d, d)).astype(np.float32))
        out.append(rng.uniform(-bound, bound, d).astype(np.float32))
    return out


def torch_case(rng: np.random.Generator, blocks: int, x_grad: bool) -> dict:
    d, n = int(rng.integers(3, 9)), int(rng.integers(2, 10))
    return {"weights": block_weights(rng, blocks, d), "x": rng.standard_normal((n, d)).astype(np.float32),
            "x_grad": x_grad, "w_out": rng.standard_normal((n, d)).astype(np.float32)}


def saved_case(rng: np.random.Generator) -> dict:
    d, n = int(rng.integers(2, 7)), int(rng.integers(2, 6))
    return {"a": rng.standard_normal((n, d)).astype(np.float32), "b": rng.standard_normal((n, d)).astype(np.float32),
            "weights": block_weights(rng, 2, d)}


def residual_args(ctx: Ctx, fn: str) -> list:
    """Arguments for one of the probe's functions (arrays, or MLP params and inputs)."""
    if fn.startswith("mlp"):
        case = mlp_case(ctx.rng, int(ctx.rng.integers(2, 5)))
        return [case["params"], case["x"]]
    shape = tuple(int(v) for v in ctx.rng.integers(2, 6, size=int(ctx.rng.integers(1, 3))))
    arrays = [ctx.rng.standard_normal(shape).astype(np.float32) for _ in range(2 if fn == "two_args" else 1)]
    return arrays


RESIDUAL_LABEL = {
    "sin_cos": "sin(cos(x))", "sin_cos_ckpt": "jax.checkpoint(sin(cos(x)))", "two_args": "f(x, y) of two arrays",
    "mlp": "the plain MLP forward (params, x)", "mlp_ckpt": "an MLP forward checkpointed per layer (params, x)",
    "mlp_dots": "an MLP forward checkpointed with policy dots_saveable",
}


def residual_case(ctx: Ctx, fn: str) -> None:
    args = residual_args(ctx, fn)
    got, want = ctx.both("residual_count", call="saved_residual_count(f, *args)", fn=fn, args=args)
    if got != want:
        raise Fail("EX12_RESIDUALS_MISMATCH", fn=RESIDUAL_LABEL[fn], got=got)


def saved_count_case(ctx: Ctx, fn: str) -> dict:
    got, want = ctx.both("saved_count", call="torch_saved_tensor_count(fn)", fn=fn, **saved_case(ctx.rng))
    if got["count"] != want["count"]:
        raise Fail("EX12_SAVED_MISMATCH", fn=SAVED_LABEL[fn], got=got["count"])
    return {"got": got, "want": want}


SAVED_LABEL = {
    "mul_sin": "sin(a * b).sum()", "square": "(a * a).sum()", "chain": "tanh(exp(a) * 2 + b) ** 3",
    "no_grad_inputs": "a graph of inputs that do not require grad", "blocks": "two Linear+tanh blocks",
    "checkpointed": "one checkpointed block",
}


@suite.check(points=1, hidden=False)
def ckpt_forward_matches(ctx: Ctx) -> None:
    """checkpointed_mlp_forward gives the reference's logits for a 2-layer and a 4-layer MLP."""
    for layers in (2, 4):
        case = mlp_case(ctx.rng, layers)
        got, want = ctx.both("forward", call="checkpointed_mlp_forward(params, x)", params=case["params"],
                             x=case["x"])
        ctx.assert_close(got, want, kind="forward", what=label("ex12.what.logits", n=layers), framework="jax")


@suite.check(points=1.5, hidden=False)
def ckpt_one_remat_per_layer(ctx: Ctx) -> None:
    """The jaxpr of the gradient holds one checkpoint equation per layer (3 and 4 layers)."""
    for layers in (3, 4):
        got, _ = ctx.both("remat_count", call=label("ex12.call.grad"),
                          **mlp_case(ctx.rng, layers))
        n = got["checkpoints"]
        if n == 0:
            raise Fail("EX12_NO_CHECKPOINT", layers=layers)
        if n == 1:
            raise Fail("EX12_ONE_CHECKPOINT", layers=layers)
        if n != got["layers"]:
            raise Fail("EX12_CHECKPOINT_COUNT", got=n, layers=layers)


@suite.check(points=1, hidden=False)
def residual_count_matches(ctx: Ctx) -> None:
    """saved_residual_count on sin(cos(x)), its checkpointed version and the plain MLP matches the reference."""
    for fn in ("sin_cos", "sin_cos_ckpt", "mlp"):
        residual_case(ctx, fn)


def check_torch(ctx: Ctx, got: dict, want: dict, blocks: int) -> None:
    ctx.assert_close(got["out"], want["out"], kind="forward", what=label("ex12.what.torch_out", n=blocks))
    ctx.assert_close(got["grads"], want["grads"], kind="step", what=label("ex12.what.torch_grads", n=blocks))


@suite.check(points=1, hidden=False)
def torch_ckpt_matches(ctx: Ctx) -> None:
    """torch_checkpointed on 3 blocks and an input that does not require grad: output and parameter gradients."""
    case = torch_case(ctx.rng, 3, x_grad=False)
    got, want = ctx.both("torch", call="torch_checkpointed(blocks, x)", **case)
    check_torch(ctx, got, want, 3)


@suite.check(points=0.5, hidden=False)
def torch_saved_count_matches(ctx: Ctx) -> None:
    """torch_saved_tensor_count on sin(a * b) and on a * a matches the reference."""
    for fn in ("mul_sin", "square"):
        saved_count_case(ctx, fn)
