"""Public checks of ex10_bridge (shown in the student notebook)."""

from __future__ import annotations

import numpy as np

from autograder.core.i18n import label
from autograder.core.suite import Ctx, Fail, Suite

suite = Suite("ex10_bridge")


def mlp_dims(rng: np.random.Generator, n_layers: int | None = None) -> list[int]:
    """Widths all different, so every layer is non-square and a missing transpose shows."""
    n_layers = int(rng.integers(2, 4)) if n_layers is None else n_layers
    return [int(d) for d in rng.choice(np.arange(2, 10), size=n_layers + 1, replace=False)]


def torch_weights(rng: np.random.Generator, dims: list[int]) -> list[np.ndarray]:
    """``[W_0 (out, in), b_0, ...]``: nn.Linear's layout, in ``parameters()`` order."""
    out = []
    for a, b in zip(dims[:-1], dims[1:]):
        out.append((rng.standard_normal((b, a)) / np.sqrt(a)).astype(np.float32))
        out.append((0.5 * rng.standard_normal(b)).astype(np.float32))
    return out


def jax_params(rng: np.random.Generator, dims: list[int], bias_scale: float = 0.5) -> dict:
    """``{"W": [(in, out)], "b": [(out,)]}``: the JAX layout; He-normal W."""
    return {"W": [(rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(np.float32)
                  for a, b in zip(dims[:-1], dims[1:])],
            "b": [(bias_scale * rng.standard_normal(b)).astype(np.float32) for b in dims[1:]]}


def inputs(rng: np.random.Generator, dims: list[int], n: int = 16) -> np.ndarray:
    return (2.0 * rng.standard_normal((n, dims[0]))).astype(np.float32)


def check_jax_tree(got: dict, dims: list[int], call: str) -> None:
    """Sharp messages for a pytree of the wrong layout (shapes from the contract only)."""
    ws = got.get("W", [])
    if len(ws) != len(dims) - 1:
        raise Fail("EX10_LAYER_COUNT", call=call, got=len(ws), expected=len(dims) - 1)
    for i, (w, a, b) in enumerate(zip(ws, dims[:-1], dims[1:])):
        if tuple(w.shape) == (b, a):
            raise Fail("EX10_NO_TRANSPOSE", call=call, i=i, got=(b, a), expected=(a, b))


@suite.check(points=2, hidden=False)
def to_jax_matches_torch(ctx: Ctx) -> None:
    """`torch_mlp_to_jax` gives W = weight.T and b per layer; the JAX forward equals the torch model's."""
    dims = mlp_dims(ctx.rng)
    kw = {"dims": dims, "weights": torch_weights(ctx.rng, dims), "x": inputs(ctx.rng, dims)}
    got, want = ctx.both("to_jax", call="torch_mlp_to_jax(model)", **kw)
    check_jax_tree(got["params"], dims, "torch_mlp_to_jax(model)")
    ctx.assert_close(got["params"], want["params"], kind="exact", what="torch_mlp_to_jax(model)", framework="jax")
    ctx.assert_close(got["jax_out"], want["torch_out"], kind="forward", framework="jax",
                     what=label("ex10.what.jax_vs_torch"))


@suite.check(points=2, hidden=False)
def to_torch_matches_jax(ctx: Ctx) -> None:
    """`jax_to_torch_mlp` writes weight = W.T and bias = b; the torch model equals the JAX forward."""
    dims = mlp_dims(ctx.rng)
    kw = {"dims": dims, "params": jax_params(ctx.rng, dims), "seed": int(ctx.rng.integers(2**31 - 1)),
          "x": inputs(ctx.rng, dims)}
    got, want = ctx.both("to_torch", call="jax_to_torch_mlp(params, model)", **kw)
    ctx.assert_close(got["weights"], want["weights"], kind="exact", what=label("ex10.what.params_after_copy"))
    ctx.assert_close(got["torch_out"], want["jax_out"], kind="forward",
                     what=label("ex10.what.torch_vs_jax"))
