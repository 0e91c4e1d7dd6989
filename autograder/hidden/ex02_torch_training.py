"""Hidden suite of ex02_torch_training (the explicit PyTorch loop): the public checks, then these."""

from __future__ import annotations

import numpy as np

from autograder.core import data as _data
from autograder.core.i18n import label
from autograder.core.suite import Ctx, Fail, Suite
from autograder.exercises.ex02_torch_training.public import bce_case, binary_batch, close, mlp_dims, mlp_params
from autograder.exercises.ex02_torch_training.public import suite as _public
from autograder.probing.families import LARGE_GRADIENTS, torch_label, torch_optimizers

suite = Suite("ex02_torch_training", checks=list(_public.checks))

# The contract's outcome bar: 300 full-batch Adam epochs at lr 0.01 on make_moons.
FIT_EPOCHS = 300
FIT_LR = 0.01
FIT_MIN_ACCURACY = 0.9


def _numpy_logits(params: list[np.ndarray], x: np.ndarray) -> np.ndarray:
    """The probe model's forward, in float64 numpy (used to draw targets that correlate with it)."""
    h = x.astype(np.float64)
    n_layers = len(params) // 2
    for i in range(n_layers):
        h = h @ params[2 * i].T.astype(np.float64) + params[2 * i + 1].astype(np.float64)
        if i < n_layers - 1:
            h = np.maximum(h, 0.0)
    return h


def _moons(rng: np.random.Generator, n: int | None = None) -> dict[str, np.ndarray]:
    """make_moons train/val arrays, targets as (N, 1); an ``n``-point random subset of train if asked."""
    data = _data.load("moons")
    x, y = data["x_train"], data["y_train"].reshape(-1, 1)
    if n is not None:
        idx = rng.choice(len(x), size=n, replace=False)
        x, y = x[idx], y[idx]
    return {"x": x.astype(np.float32), "y": y.astype(np.float32),
            "x_val": data["x_val"].astype(np.float32), "y_val": data["y_val"].reshape(-1, 1).astype(np.float32)}


@suite.check(points=1)
def bce_stable_for_large_logits(ctx: Ctx) -> None:
    """|z| up to 1e4 (both signs, both targets): finite loss and gradient, equal to the reference."""
    case = bce_case(ctx.rng, int(ctx.rng.integers(16, 33)), 2, max_abs=1e4)
    # Make sure every sign/target combination appears with a huge logit.
    flat_z, flat_y = case["logits"].reshape(-1), case["targets"].reshape(-1)
    spots = ctx.rng.choice(flat_z.size, size=4, replace=False)
    for spot, (sign, target) in zip(spots, [(1, 0), (1, 1), (-1, 0), (-1, 1)]):
        flat_z[spot] = sign * ctx.rng.uniform(5e3, 1e4)
        flat_y[spot] = target
    got, want = ctx.both("bce", call=label("ex02.call.bce_large"), grad=True, **case)
    if not np.all(np.isfinite(got["loss"])):
        raise Fail("EX02_BCE_OVERFLOW")
    ctx.assert_close(got["loss"], want["loss"], kind="exact", what=label("ex02.what.bce_large"))
    if not np.all(np.isfinite(got["grad"])):
        raise Fail("EX02_BCE_GRAD_NONFINITE")
    ctx.assert_close(got["grad"], want["grad"], kind="step", what=label("ex02.what.bce_grad"))


@suite.check(points=1)
def bce_does_not_call_builtin(ctx: Ctx) -> None:
    """The built-in BCE-with-logits is banned; the probe watches every route to it while the loss runs, and
    the graph the loss built (another thread's use of it leaves its backward node there)."""
    case = bce_case(ctx.rng, int(ctx.rng.integers(8, 33)), 1, max_abs=8.0)
    # with a graph asked for: the built-in's backward node shows it was used even from another thread
    got = ctx.student("bce", call="bce_with_logits(logits, targets)", grad=True, **case)
    if got["builtin"]:
        raise Fail("EX02_BUILTIN_BCE", names=", ".join(got["builtin"]))


@suite.check(points=0.5)
def train_step_sets_train_mode(ctx: Ctx) -> None:
    """A model left in eval() mode is in train() mode during the forward of `train_step`."""
    dims = mlp_dims(ctx.rng)
    x, y = binary_batch(ctx.rng, int(ctx.rng.integers(8, 33)), dims[0])
    got = ctx.student("train_step", call="train_step(model, optimizer, x, y, loss_fn)",
                      params=mlp_params(ctx.rng, dims), x=x, y=y, lr=float(ctx.rng.uniform(0.01, 0.1)),
                      steps=1, start_mode="eval")
    if not got["modes"] or not all(got["modes"]):
        raise Fail("EX02_TRAIN_MODE")


def _evaluate_case(ctx: Ctx) -> dict:
    """Inputs, weights and targets that make accuracy informative.

    One sample's logit is moved (through the last bias) into (0.1, 0.4), between the two
    plausible wrong thresholds 0.5-on-logits and the right 0.5-on-probabilities; targets
    agree with the sign of the logit wherever |logit| < 1 and are flipped with
    probability 1/4 elsewhere, so a shifted threshold always changes the accuracy.
    """
    dims = mlp_dims(ctx.rng)
    params = mlp_params(ctx.rng, dims)
    x = (2.0 * ctx.rng.standard_normal((64, dims[0]))).astype(np.float32)
    logits = _numpy_logits(params, x)[:, 0]
    i = int(ctx.rng.integers(len(x)))
    shift = ctx.rng.uniform(0.1, 0.4) - logits[i]
    params[-1] = (params[-1] + shift).astype(np.float32)
    logits = _numpy_logits(params, x)
    agree = (logits >= 0.0).astype(np.float32)
    flip = ((ctx.rng.random(agree.shape) < 0.25) & (np.abs(logits) >= 1.0)).astype(np.float32)
    return {"params": params, "x": x, "y": np.abs(agree - flip).astype(np.float32)}


@suite.check(points=1)
def evaluate_matches_reference(ctx: Ctx) -> None:
    """`evaluate` returns (mean loss, accuracy) as floats equal to the reference's."""
    got, want = ctx.both("evaluate", call="evaluate(model, x, y, loss_fn)", **_evaluate_case(ctx))
    if got["bad_return"]:
        raise Fail("EX02_EVAL_RETURN", got=got["bad_return"])
    if got["loss_fn_calls"] == 0:
        raise Fail("EX02_LOSS_FN_UNUSED")
    ctx.assert_close(got["loss"], want["loss"], kind="forward", what=label("ex02.what.eval_loss"))
    ctx.assert_close(got["accuracy"], want["accuracy"], kind="exact", what=label("ex02.what.eval_acc"))
    case = _ties_case(ctx)
    tied = case.pop("ties")
    got, want = ctx.both("evaluate", call="evaluate(model, x, y, loss_fn)", **case)
    if ctx.difference(got["accuracy"], want["accuracy"], kind="exact"):
        # the tied rows (targets 1) counted as class 0, the rest as the reference counts them: that threshold's bug
        ties_as_zero = want["accuracy"] - float(np.mean(tied))
        if ctx.difference(got["accuracy"], ties_as_zero, kind="exact") is None:
            raise Fail("EX02_EVAL_TIES")
        ctx.assert_close(got["accuracy"], want["accuracy"], kind="exact", what=label("ex02.what.eval_acc"))


def _ties_case(ctx: Ctx) -> dict:
    """Zero biases and a few all-zero input rows: their logits are exactly 0, where ``sigmoid`` is exactly 0.5
    (class 1, as ``sigmoid(logits) >= 0.5`` says; ``logits > 0`` and ``round(sigmoid(logits))`` say 0), with
    targets 1 there; the other rows as drawn."""
    dims = mlp_dims(ctx.rng)
    params = [np.zeros_like(a) if a.ndim == 1 else a for a in mlp_params(ctx.rng, dims)]
    x = (2.0 * ctx.rng.standard_normal((32, dims[0]))).astype(np.float32)
    y = (_numpy_logits(params, x)[:, :1] >= 0.0).astype(np.float32)
    ties = ctx.rng.choice(len(x), size=8, replace=False)
    x[ties] = 0.0
    y[ties] = 1.0
    return {"params": params, "x": x, "y": y, "ties": np.isin(np.arange(len(x)), ties)}  # "ties": the grader's alone


@suite.check(points=1)
def evaluate_uses_eval_mode_and_no_grad(ctx: Ctx) -> None:
    """During `evaluate`'s forward the model is in eval() mode and autograd records nothing."""
    got = ctx.student("evaluate", call="evaluate(model, x, y, loss_fn)", **_evaluate_case(ctx))
    if not got["any_training"] or any(got["any_training"]):
        raise Fail("EX02_EVAL_MODE")
    if any(got["grad_enabled"]):
        raise Fail("EX02_EVAL_GRAD")


def _settings_text(got: dict, want: dict) -> str | dict:
    """``torch.optim.AdamW`` with ``betas=(0.9, 0.95), weight_decay=0.1``: the class, and the settings that differ
    from the reference's (the student's values only: what their code chose); code, or a label where it takes words."""
    text = f"torch.optim.{got['type']}"
    gs, ws = got["settings"], want["settings"]
    if len(gs) != len(ws):
        return label("ex02.value.groups", cls=text, n=len(gs))
    diffs = []
    for g, w in zip(gs, ws, strict=True):
        for k in sorted(set(g) | set(w)):
            if g.get(k) != w.get(k) and k in g:
                v = g[k]
                diffs.append(f"{k}={tuple(v) if isinstance(v, list) else v}")
    return label("ex02.value.settings", cls=text, settings=", ".join(dict.fromkeys(diffs))) if diffs else f"`{text}`"


def judge_fit_optimizer(got: list[dict], want: list[dict], epochs: int) -> None:
    """Which optimizer stepped during `fit`, with which settings, how often: exactly the reference's.

    Decided from what the probe's step hook recorded (class, param-group settings without the
    implementation flags, the parameters held, the number of steps), never from a difference in the
    losses, so the verdict is the same at every grading seed.
    """
    if not got:
        raise Fail("EX02_FIT_NO_OPTIMIZER")
    if len(got) > 1:
        raise Fail("EX02_FIT_OPTIMIZERS", count=len(got), epochs=epochs)
    g, w = got[0], want[0]
    if g["type"] != w["type"] or g["settings"] != w["settings"]:
        raise Fail("EX02_FIT_OPTIMIZER", got=_settings_text(g, w))
    if not g["holds_model"]:
        raise Fail("EX02_FIT_OPTIMIZER_PARAMS")
    if g["steps"] != w["steps"]:
        raise Fail("EX02_FIT_STEPS", got=g["steps"], epochs=epochs)


@suite.check(points=1)
def fit_first_epochs_match(ctx: Ctx) -> None:
    """Same initial weights: `fit` steps one torch.optim.Adam(model.parameters(), lr=lr) with its default
    settings once per epoch (decided exactly, from what stepped), and its first 5 losses match the reference's."""
    width = int(ctx.rng.integers(8, 33))
    dims = [2, width, width, 1]
    data = _moons(ctx.rng, n=int(ctx.rng.integers(64, 201)))
    epochs = 5  # long histories drift chaotically between valid implementations
    lr = float(10.0 ** ctx.rng.uniform(np.log10(0.005), np.log10(0.05)))
    got, want = ctx.both("fit", call=f"fit(model, x, y, epochs={epochs}, lr={lr:.4g})",
                         params=mlp_params(ctx.rng, dims), x=data["x"], y=data["y"], epochs=epochs, lr=lr)
    if len(got["losses"]) != epochs:
        raise Fail("EX02_FIT_LENGTH", epochs=epochs, got=len(got["losses"]))
    judge_fit_optimizer(got["optimizers"], want["optimizers"], epochs)
    start = ctx.drift_start(got["losses"], want["losses"], kind="steps")
    if start is not None:
        raise Fail("EX02_FIT_DRIFTS", what=label("ex02.what.fit_losses", n=epochs), step=start)
    ctx.assert_close(got["losses"], want["losses"], kind="steps", what=label("ex02.what.fit_losses", n=epochs))


@suite.check(points=0.5)
def fit_reaches_accuracy(ctx: Ctx) -> None:
    """300 epochs at lr 0.01 on make_moons from a random init: validation accuracy >= 0.9.

    Judged by outcome, never bit for bit. A correct fit practically never fails: the
    reference reached 0.93 from each of 500 random inits measured (0 below 0.9).
    """
    data = _moons(ctx.rng)
    got = ctx.student("fit", call=f"fit(model, x, y, epochs={FIT_EPOCHS}, lr={FIT_LR})",
                      params=mlp_params(ctx.rng, [2, 32, 32, 1]), epochs=FIT_EPOCHS, lr=FIT_LR, **data)
    if len(got["losses"]) != FIT_EPOCHS:
        raise Fail("EX02_FIT_LENGTH", epochs=FIT_EPOCHS, got=len(got["losses"]))
    if not got["val_accuracy"] >= FIT_MIN_ACCURACY:
        raise Fail("EX02_FIT_ACCURACY", got=f"{got['val_accuracy']:.3f}", epochs=FIT_EPOCHS, lr=FIT_LR,
                   threshold=FIT_MIN_ACCURACY)


def _step_case(ctx: Ctx) -> dict:
    dims = mlp_dims(ctx.rng)
    x, y = binary_batch(ctx.rng, int(ctx.rng.integers(16, 49)), dims[0])
    return {"params": mlp_params(ctx.rng, dims), "x": x, "y": y}


def judge_drift(ctx: Ctx, got: dict, want: dict) -> None:
    """Calls of `train_step` whose first update matches the reference's and a later one does not (the first loss,
    then the params after each call): something carried wrongly from one call to the next (gradients left in .grad,
    the optimizer's state bypassed)."""
    start = ctx.drift_start([got["losses"][0], *got["params"]], [want["losses"][0], *want["params"]], kind="step")
    if start is not None:
        raise Fail("EX02_STEP_DRIFTS", step=start)


@suite.check(points=0.5)
def train_step_clears_old_gradients(ctx: Ctx) -> None:
    """Gradients already on the parameters when `train_step` is called (as an earlier backward leaves them)
    must not reach the update: 2 calls with SGD (momentum) match the reference's.

    Zeroing after `optimizer.step()` instead of before `backward()` is right only while the gradients
    start at zero (a fresh model); here they never do, so it fails at every seed.
    """
    case = _step_case(ctx)
    # gradients of the size of a real one (the BCE's are O(0.1-1)): far beyond any tolerance after lr x
    stale = [ctx.rng.standard_normal(p.shape).astype(np.float32) for p in case["params"]]
    spec = torch_optimizers(ctx.rng, ("sgd_momentum",))[0]
    call = label("ex02.call.stale")
    got, want = ctx.both("train_step_with", call=call, optimizer=spec, steps=2, stale=stale, **case)
    if close(ctx, got["params"], want["params"], "step") and close(ctx, got["losses"], want["losses"], "step"):
        return
    fresh, fresh_want = ctx.both("train_step_with", call="train_step(model, optimizer, x, y, loss_fn)",
                                 optimizer=spec, steps=2, **case)
    if close(ctx, fresh["params"], fresh_want["params"], "step"):
        raise Fail("EX02_STALE_GRADS")
    judge_drift(ctx, fresh, fresh_want)
    ctx.assert_close(got["params"], want["params"], kind="step", what=label("ex02.what.params_two_steps"))


@suite.check(points=0.5)
def train_step_any_optimizer(ctx: Ctx) -> None:
    """`train_step` steps the optimizer it is given: with Adam, AdamW (weight decay) and RMSprop, 2 calls each
    give the reference's losses and parameters; then SGD with momentum on a loss scaled
    by 1000 (the optimizer gets the gradients backward() left, unclipped)."""
    case = _step_case(ctx)
    for spec in torch_optimizers(ctx.rng):
        opt_label = torch_label(spec)
        got, want = ctx.both("train_step_with", call=f"train_step(model, {opt_label}, x, y, loss_fn)",
                             optimizer=spec, steps=2, **case)
        judge_drift(ctx, got, want)
        ctx.assert_close(got["losses"], want["losses"], kind="step",
                         what=label("ex02.what.losses_two_steps_with", opt=opt_label))
        ctx.assert_close(got["params"], want["params"], kind="step",
                         what=label("ex02.what.params_two_steps_with", opt=opt_label))
    spec = {"name": "sgd_momentum", "lr": float(ctx.rng.uniform(0.05, 0.2)) / LARGE_GRADIENTS}
    got, want = ctx.both("train_step_with", call=f"train_step(model, {torch_label(spec)}, x, y, loss_fn)",
                         optimizer=spec, steps=2, loss_scale=LARGE_GRADIENTS, **case)
    if not (close(ctx, got["losses"], want["losses"], "step") and close(ctx, got["params"], want["params"], "step")):
        if got["loss_fn_calls"] == 0:  # its own loss equals the usual one: only the scaled one shows it
            raise Fail("EX02_LOSS_FN_UNUSED")
        raise Fail("EX02_GRADIENTS_CHANGED")  # right at the usual gradients (above), wrong at large ones
