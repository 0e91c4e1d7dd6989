"""Public checks of ex05_jit_train_step (shown in the student notebook)."""

from __future__ import annotations

import numpy as np

from autograder.core.i18n import label
from autograder.core.suite import Ctx, Fail, Suite

suite = Suite("ex05_jit_train_step")


def he_params(rng: np.random.Generator, layer_dims: list[int]) -> dict[str, list[np.ndarray]]:
    """He-normal weights, zero biases, JAX layout (the reference init's recipe, drawn by the grader)."""
    ws = [(rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(np.float32)
          for a, b in zip(layer_dims[:-1], layer_dims[1:])]
    return {"W": ws, "b": [np.zeros(b, np.float32) for b in layer_dims[1:]]}


def small_case(rng: np.random.Generator, n: int | None = None) -> dict:
    """A small MLP problem: params for [d, h, 1], x (n, d), y (n,) of 0/1."""
    d, h = int(rng.integers(2, 6)), int(rng.integers(4, 12))
    n = int(rng.integers(16, 48)) if n is None else n
    p = he_params(rng, [d, h, 1])
    p["b"] = [(0.1 * rng.standard_normal(b.shape)).astype(np.float32) for b in p["b"]]
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = rng.integers(0, 2, size=n).astype(np.float32)
    return {"params": p, "x": x, "y": y}


def check_losses(ctx: Ctx, got: list[float], want: list[float], what: dict, *, fit: bool = False,
                 params: tuple | None = None) -> None:
    """Losses must match; a first loss equal to the reference's second means 'loss after the update'; losses
    (then ``params``, the student's and the reference's params after the last step) that match for the first
    update and drift later mean a state not carried from one step to the next (``fit``: the losses came from
    `fit`, which may be the one that drops it)."""
    if len(got) == len(want) >= 2 and abs(got[0] - want[0]) > 1e-4 + 1e-3 * abs(want[0]) \
            and abs(got[0] - want[1]) <= 1e-4 + 1e-3 * abs(want[1]):
        raise Fail("EX05_LOSS_AFTER_UPDATE")
    ends = ([params[0]], [params[1]]) if params is not None else ([], [])
    start = ctx.drift_start([*got, *ends[0]], [*want, *ends[1]], kind="steps", framework="jax")
    if start is not None:
        raise Fail("EX05_FIT_STATE_NOT_CARRIED" if fit else "EX05_STATE_NOT_CARRIED", what=what, step=start)
    ctx.assert_close(got, want, kind="steps", what=what, framework="jax")


@suite.check(points=2, hidden=False)
def step_matches_reference(ctx: Ctx) -> None:
    """Two steps with optax.sgd: the pre-update losses and the new params match the reference."""
    case = small_case(ctx.rng)
    lr = float(ctx.rng.uniform(0.05, 0.2))
    got, want = ctx.both("steps", call="step(params, opt_state, x, y)", opt="sgd", lr=lr, n_steps=2, **case)
    check_losses(ctx, got["losses"], want["losses"], label("ex05.what.step_losses_sgd"))
    ctx.assert_close(got["params"], want["params"], kind="steps", what=label("ex05.what.params_sgd"),
                     framework="jax")


@suite.check(points=1, hidden=False)
def fit_first_losses(ctx: Ctx) -> None:
    """fit on make_moons for 5 steps: Python-float losses matching the reference's Adam run."""
    p = he_params(ctx.rng, [2, 32, 32, 1])
    got, want = ctx.both("fit", call="fit(params, x, y, steps=5, learning_rate=0.01, loss_fn=...)",
                         params=p, steps=5, learning_rate=0.01, return_params=True)
    if len(got["losses"]) != 5:
        raise Fail("EX05_FIT_LENGTH", steps=5, got=len(got["losses"]))
    check_losses(ctx, got["losses"], want["losses"], label("ex05.what.fit_losses_adam"), fit=True,
                 params=(got["params"], want["params"]))
    ctx.assert_close(got["params"], want["params"], kind="steps", what=label("ex05.what.fit_params"), framework="jax")
