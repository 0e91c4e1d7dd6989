"""Hidden suite of ex04_jax_mlp (a pure-JAX MLP): the public checks, then these.

Here tapetrace checks *how* the JAX code is written, not only its values:
the forward must survive jit/grad/vmap and leave its inputs alone, the loss
must be stable and differentiable at huge logits, the loss and the accuracy
read the first logit of a model with several outputs, and the initialiser is
judged by statistics (valid inits differ in bits), with each statistical
band's false-fail probability stated next to it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from autograder.core.compare import first_difference
from autograder.core.i18n import label
from autograder.core.suite import Ctx, Fail, StudentProblem, Suite
from autograder.core.tolerances import tolerance
from autograder.exercises.ex04_jax_mlp.public import inputs, labels, params, scale_logits, shared_batch, shared_dims
from autograder.exercises.ex04_jax_mlp.public import suite as _public

suite = Suite("ex04_jax_mlp", checks=list(_public.checks))


def _close(ctx: Ctx, got: object, want: object, kind: str) -> str | None:
    return first_difference(got, want, tolerance(kind, ctx.backend("jax")))


def _seed(ctx: Ctx) -> int:
    return int(ctx.rng.integers(0, 2**31 - 1))


# ----------------------------------------------------------------------------- forward
@suite.check(points=1)
def forward_under_transforms(ctx: Ctx) -> None:
    """`mlp_forward` gives the eager result under jax.jit and jax.vmap, and the reference gradient."""
    d = shared_dims(ctx, n_hidden=int(ctx.rng.integers(1, 4)))  # shapes shared by the checks: see public.py
    n = shared_batch(ctx)
    case = {"params": params(ctx.rng, d), "x": inputs(ctx.rng, n, d[0]),
            "w": ctx.rng.standard_normal((n, d[-1])).astype(np.float32)}
    try:
        got, want = ctx.both("forward_transforms", call=label("ex04.call.transforms"), **case)
    except StudentProblem as err:
        if err.key == "CALL_EXCEPTION" and "Tracer" in str(err.fields.get("error", "")):
            raise Fail("EX04_NOT_TRACEABLE", transform=label("ex04.value.a_transform"),
                       error=err.fields.get("error", "")) from None
        raise
    ctx.assert_close(got["eager"], want["eager"], kind="forward", what="mlp_forward(params, x)", framework="jax")
    for name, call in (("jit", "jax.jit(mlp_forward)(params, x)"),
                       ("vmap", "jax.vmap(lambda xi: mlp_forward(params, xi[None])[0])(x)")):
        detail = _close(ctx, got[name], want["eager"], "forward")
        if detail:
            raise Fail("EX04_TRANSFORM_DIFFERS", call=call, detail=detail)
    ctx.assert_close(got["grad"], want["grad"], kind="step",
                     what="jax.grad(lambda p: sum(w * mlp_forward(p, x)))(params)", framework="jax")


@suite.check(points=1)
def forward_is_pure(ctx: Ctx) -> None:
    """Forward leaves params untouched, keeps no state between calls, reads no globals."""
    d1 = shared_dims(ctx, n_hidden=1)
    d2 = [d1[0], *(int(v) for v in ctx.rng.integers(2, 12, size=3)), int(ctx.rng.integers(1, 6))]
    init_dims = d1[:2]  # one layer (a global depth would break both), init_params_structure's first shape
    n = shared_batch(ctx)
    case = {"params1": params(ctx.rng, d1), "x1": inputs(ctx.rng, n, d1[0]),
            "params2": params(ctx.rng, d2), "x2": inputs(ctx.rng, n, d2[0]),
            "init_dims": init_dims, "seed": _seed(ctx)}
    try:
        got, want = ctx.both("forward_purity", call=label("ex04.call.several"), **case)
    except StudentProblem as err:
        if err.key == "CALL_EXCEPTION" and str(err.fields.get("error", "")).startswith("NameError"):
            raise Fail("EX04_GLOBAL_NAME", error=err.fields["error"]) from None
        raise
    if got["changed"]:
        raise Fail("EX04_MUTATES", what=got["changed"])
    for name, call in (("first", "mlp_forward(params1, x1)"), ("second", "mlp_forward(params2, x2)")):
        detail = _close(ctx, got[name], want[name], "forward")
        if detail:
            raise Fail("EX04_STATEFUL", call=call, detail=detail)
    for name, call in (("again", "mlp_forward(params1, x1), called again,"),
                       ("jit", "jax.jit(mlp_forward)(params1, x1)")):
        detail = _close(ctx, got[name], want["first"], "forward")
        if detail:
            raise Fail("EX04_STATEFUL", call=call, detail=detail)


# ----------------------------------------------------------------------------- loss, accuracy
def several_outputs(ctx: Ctx, n_hidden: int) -> list[int]:
    """Layer widths whose output layer has several outputs (the run's shared widths, the output 2..11 wide).

    `bce_loss` and `accuracy` read the first logit only (the stub's `[:, 0]`): on one output, code that takes
    every column (`jnp.squeeze(logits)`, `reshape(-1)`) gives the same numbers, so these checks draw several.
    """
    return shared_dims(ctx, n_hidden=n_hidden)  # widths from 2..11: never one output


def first_output(p: dict[str, list[np.ndarray]]) -> dict[str, list[np.ndarray]]:
    """The same params cut to the first output (the last layer's first column): the same first logit."""
    return {"W": [*p["W"][:-1], np.ascontiguousarray(p["W"][-1][:, :1])], "b": [*p["b"][:-1], p["b"][-1][:1].copy()]}


def first_logit_only(ctx: Ctx, probe: str, call: str, case: dict[str, Any], detail: str,
                     differs: Callable[[Any, Any], str | None], **options: Any) -> None:
    """Fails with `EX04_FIRST_LOGIT` when the student's function, wrong on a model with several outputs, is right on
    the same model cut to its first output (whose logit is the same): it reads more than the first logit.

    Args:
        ctx: the check's context.
        probe: the probe that ran the wide case.
        call: the call, as messages show it.
        case: the wide case's inputs (``params``, ``x``, ``y``).
        detail: what went wrong on the wide case (the error raised, or the comparison's sentence).
        differs: the check's own comparison of a student's and the reference's results (None: they match).
        **options: the probe's other arguments.
    """
    narrow = {**case, "params": first_output(case["params"])}
    try:
        got, want = ctx.both(probe, call=call, **options, **narrow)
    except StudentProblem:
        return  # wrong on one output too: the wide case's own failure says more
    if differs(got, want) is None:
        raise Fail("EX04_FIRST_LOGIT", call=call, outputs=int(case["params"]["W"][-1].shape[1]), detail=detail) from None


def _call_error(err: StudentProblem) -> str | None:
    """The error a student's call raised (None for any other problem: a wrong type, a trace error, a timeout)."""
    return str(err.fields.get("error", "")) if err.key == "CALL_EXCEPTION" else None


@suite.check(points=1)
def bce_loss_stable(ctx: Ctx) -> None:
    """`bce_loss` and its gradient match the reference with logits of size 1e3..1e4, on a model with several
    outputs (the loss reads the first logit only)."""
    d = several_outputs(ctx, n_hidden=int(ctx.rng.integers(1, 3)))
    n = shared_batch(ctx)
    p = params(ctx.rng, d)
    x = inputs(ctx.rng, n, d[0])
    y = labels(ctx.rng, n)
    y[:2] = [0.0, 1.0]  # both classes present
    p = scale_logits(p, x, float(ctx.rng.uniform(2e3, 1e4)))  # largest first |logit| in 2e3..1e4
    call = "bce_loss(params, x, y)"
    case = {"params": p, "x": x, "y": y}

    def differs(got: dict[str, Any], want: dict[str, Any]) -> str | None:
        return _close(ctx, got["loss"], want["loss"], "forward") or _close(ctx, got["grad"], want["grad"], "step")

    try:
        got, want = ctx.both("bce", call=call, with_grad=True, **case)
    except StudentProblem as err:
        error = _call_error(err)
        if error is not None:
            first_logit_only(ctx, "bce", call, case, error, differs, with_grad=True)
        raise
    detail = _close(ctx, got["loss"], want["loss"], "forward")
    if detail:
        first_logit_only(ctx, "bce", call, case, detail, differs, with_grad=True)
        raise Fail("EX04_BCE_UNSTABLE", call=call, detail=detail)
    detail = _close(ctx, got["grad"], want["grad"], "step")
    if detail:
        raise Fail("EX04_BCE_GRAD", detail=detail)


@suite.check(points=1)
def accuracy_matches(ctx: Ctx) -> None:
    """`accuracy` is a Python float: the fraction of rows with (logit >= 0) == (y == 1), ties included, on a model
    with several outputs (the first logit only)."""
    d = several_outputs(ctx, n_hidden=int(ctx.rng.integers(1, 3)))
    n = shared_batch(ctx)
    p = params(ctx.rng, d, bias=0.0)  # zero biases: a zero input row gives a logit of exactly 0
    x = inputs(ctx.rng, n, d[0], scale=1.0)
    y = labels(ctx.rng, n)
    ties = ctx.rng.choice(n, size=6, replace=False)
    x[ties] = 0.0
    y[ties] = 1.0  # logit 0 counts as class 1
    call = "accuracy(params, x, y)"
    case = {"params": p, "x": x, "y": y}

    def differs(got: float, want: float) -> str | None:
        return _close(ctx, got, want, "exact")

    try:
        got, want = ctx.both("accuracy", call=call, **case)
    except StudentProblem as err:
        error = _call_error(err)
        if error is not None:
            first_logit_only(ctx, "accuracy", call, case, error, differs)
        raise
    detail = differs(got, want)
    if detail:
        first_logit_only(ctx, "accuracy", call, case, detail, differs)
    ctx.assert_close(got, want, kind="exact", what=call, framework="jax")


# ----------------------------------------------------------------------------- init_params
# Statistical bands for init_params. W is judged on two large layers,
# (d0, h) and (h, h) with d0 in [128, 192], h in [256, 320]: n >= 32768
# entries each, 98304+ pooled. Bands and their false-fail
# probabilities for a correct init (plain normal or he_normal's truncated
# normal), from the CLT for the sample statistics (n is large):
# - mean: |mean| <= 6 * std_target / sqrt(n) per layer: two-sided normal tail
#   2 * Phi(-6) = 2.0e-9 per layer, 4e-9 for both.
# - root mean square / sqrt(2 / d_in) within 1 +- 0.05 per layer: the relative
#   sd of the rms is sqrt((kurt - 1) / (4 n)) <= sqrt(2 / (4 * 32768)) = 0.0039
#   (normal; the truncated normal's is smaller), so the band is 12.8 sd wide:
#   2 * Phi(-12.8) = 1.6e-37 per layer. sqrt(1 / d_in) gives 0.71 and a
#   std taken from the fan-out gives <= sqrt(192 / 256) = 0.87: both fail.
# - kurtosis m4 / m2^2 pooled over both layers in [2.1, 3.4]. Normal: 3,
#   sd sqrt(24 / N) <= 0.0156 -> 25 sd to the upper bound. he_normal's normal
#   truncated at +-2 sd: 2.3655 (computed: scipy.stats.truncnorm(-2, 2);
#   jax draws 2.371), sd measured 0.0055 at N = 131072 -> <= 0.0064 here ->
#   41 sd to the lower bound. Both tails < 1e-100. A uniform of the same std
#   has kurtosis 1.8 (sd 0.0037): it passes with probability < 1e-100.
# Total false-fail probability of the check: < 5e-9.
_MEAN_Z = 6.0
_STD_BAND = 0.05
_KURT_BAND = (2.1, 3.4)
_BIG = 32768


@suite.check(points=1)
def init_params_he_statistics(ctx: Ctx) -> None:
    """W entries look He-normal: mean 0, std sqrt(2 / d_in), normal-shaped (plain or truncated)."""
    h = int(ctx.rng.integers(256, 321))
    d = [int(ctx.rng.integers(128, 193)), h, h]  # few distinct shapes: eager jax.random compiles per shape
    stats = ctx.student("init_stats", call="init_params(layer_dims, key)", layer_dims=d, seed=_seed(ctx))
    if len(stats) != len(d) - 1:
        raise Fail("EX04_INIT_LAYERS", call="init_params(layer_dims, key)", name="W",
                   got=label("value.arrays", n=len(stats)), n=len(d) - 1)
    big = [(i, s) for i, s in enumerate(stats) if s["n"] >= _BIG]
    if len(big) != len(stats):
        raise Fail("EX04_W_SHAPES", dims=d, got=[tuple(s["shape"]) for s in stats])
    for i, s in big:
        if not s["finite"]:
            raise Fail("NONFINITE", what=f"`init_params(...)['W'][{i}]`")
        target = math.sqrt(2.0 / d[i])
        if abs(s["mean"]) > _MEAN_Z * target / math.sqrt(s["n"]):
            raise Fail("EX04_INIT_MEAN", layer=i, got=f"{s['mean']:.3g}")
        ratio = s["rms"] / target
        if abs(ratio - 1.0) > _STD_BAND:
            raise Fail("EX04_INIT_STD", layer=i, fan_in=d[i], ratio=f"{ratio:.3f}")
    n_all = sum(s["n"] for _, s in big)
    kurt = sum(s["n"] * s["kurtosis"] for _, s in big) / n_all
    if not _KURT_BAND[0] <= kurt <= _KURT_BAND[1]:
        key = "EX04_INIT_FLAT" if kurt < _KURT_BAND[0] else "EX04_INIT_HEAVY"
        raise Fail(key, kurtosis=f"{kurt:.2f}")


@suite.check(points=1)
def init_params_keys(ctx: Ctx) -> None:
    """Same key -> same params; another key -> other params; one subkey per layer; typed keys work."""
    h = int(ctx.rng.integers(8, 25))
    d = [h, h, h]  # W[0] and W[1] have the same shape
    seed = _seed(ctx)
    other = (seed + 1 + int(ctx.rng.integers(0, 1000))) % (2**31 - 1)
    got = ctx.student("init_keys", call="init_params(layer_dims, key)", layer_dims=d, seed=seed, other_seed=other)
    if not got["same_key_same"]:
        raise Fail("EX04_SAME_KEY_DIFFERS")
    if got["layers_equal_across_keys"]:
        raise Fail("EX04_KEY_IGNORED")
    if got["shared_layers"]:
        i, j = got["shared_layers"][0]
        raise Fail("EX04_LAYERS_SHARE_KEY", i=i, j=j)
    if not got["typed_shapes_ok"] or not got["typed_same"]:
        raise Fail("EX04_TYPED_KEY", error=label("ex04.value.typed_key_differs"))
