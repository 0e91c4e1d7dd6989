"""Hidden suite of ex07_flax_cnn (Flax CNN, to_nhwc, jitted train step): the public checks, then these."""

from __future__ import annotations

import numpy as np

from autograder.core.i18n import label
from autograder.core.suite import Ctx, Fail, StudentProblem, Suite
from autograder.exercises.ex07_flax_cnn.public import diagnose_params, draw_params, images
from autograder.exercises.ex07_flax_cnn.public import suite as _public
from autograder.probing.families import optax_label, optax_needing_params
from autograder.probing.observe import compiled_once_per_shape, programs

suite = Suite("ex07_flax_cnn", checks=list(_public.checks))

# Outcome on digits: full-batch optax.adam from N(0, 1/fan_in) kernels and
# zero biases (draw_params, like Flax's lecun_normal/zeros init), trained on
# the first DIGITS_TRAIN training images, judged on the whole validation split
# (360). Measured with the reference through this probe on CPU (one XLA
# thread, as in the workers) for 30 draws of the params
# (np.random.default_rng(0..29)), validation accuracy (min / mean / max, sd):
#   all 1437, adam(1e-3), 150 steps  0.911 / 0.921 / 0.939, sd 0.0073  (4.5 s)
#   first 512, adam(2e-3), 100 steps  0.911 / 0.928 / 0.958, sd 0.0113  (1.7 s)
#   first 256, adam(2e-3), 100 steps  0.892 / 0.906 / 0.936, sd 0.0106
#   first 256, adam(3e-3), 100 steps  0.903 / 0.923 / 0.939, sd 0.0101  (1.1 s) <- used
# (earlier, all 1437 at adam(1e-3): 50 steps 0.64-0.77, 100 steps 0.83-0.90.)
# A bar of 0.85 is 7 sd below the mean and 0.05 below the worst draw, so a
# correct step fails with a probability far below 1e-6 per run (normal tail),
# on GPU/TPU too (their float drift is far smaller than that spread). Steps
# that do not really learn (ignoring the optimizer for plain SGD at 0.01;
# subtracting optax's updates; no update) stay far below it (the mutants
# prove it). Cost: one compile (~0.9 s at XLA's level 2, FAST_RUN) + 100 steps
# x ~6 ms on one CPU thread (512 images: ~12 ms); timeout_scale=3 covers a
# busy machine.
DIGITS_TRAIN = 256
DIGITS_STEPS = 100
DIGITS_LR = 3e-3
DIGITS_BAR = 0.85


def _other_num_classes(rng: np.random.Generator) -> int:
    """A class count that is not the default 10 (so a hard-coded Dense(10) shows)."""
    return int(rng.choice([k for k in range(2, 17) if k != 10]))


def _case(ctx: Ctx, n: int) -> tuple[dict, int]:
    """Params for `FlaxCNN()` (shaped by the reference's eval_shape), images, and the class count.

    Checks other than `num_classes_respected` use the default model, so a
    hard-coded class count costs that check only.
    """
    got, want = ctx.both("param_shapes", call=_init_call(None), num_classes=None, n=n)
    diagnose_params(got["variables"], want["variables"])
    case = {"num_classes": None, "params": draw_params(ctx.rng, want["variables"]), "x": images(ctx.rng, n)}
    return case, int(want["out"][1])


def _init_call(num_classes: int | None) -> str:
    return "FlaxCNN().init" if num_classes is None else f"FlaxCNN(num_classes={num_classes}).init"


@suite.check(points=0.5)
def num_classes_respected(ctx: Ctx) -> None:
    """`FlaxCNN(num_classes=k)`: Dense_1 is (64, k), the logits (N, k), values as the reference."""
    k = _other_num_classes(ctx.rng)
    n = int(ctx.rng.integers(2, 9))
    got, want = ctx.both("param_shapes", call=_init_call(k), num_classes=k, n=n)
    if got["out"] != want["out"]:
        raise Fail("EX07_OUT_SHAPE", call=f"FlaxCNN(num_classes={k})", n=n, got=tuple(got["out"]))
    diagnose_params(got["variables"], want["variables"])
    params = draw_params(ctx.rng, want["variables"])
    x = images(ctx.rng, n)
    call = f"FlaxCNN(num_classes={k}).apply"
    got, want = ctx.both("forward", call=call, num_classes=k, params=params, x=x)
    ctx.assert_close(got, want, kind="forward", what=f"{call}(params, x)", framework="jax")


@suite.check(points=0.5)
def average_pooling(ctx: Ctx) -> None:
    """The pools are `avg_pool` (2x2, stride 2): PyTorch's CNN used MaxPool2d, this one does not."""
    n = int(ctx.rng.integers(16, 33))
    case, k = _case(ctx, n)
    call = "FlaxCNN().apply"
    got, want = ctx.both("forward", call=call, **case)
    if ctx.difference(got, want, kind="forward", framework="jax") is None:
        return
    maxpool = ctx.reference("max_pool_forward", num_classes=k, params=case["params"], x=case["x"])
    if ctx.difference(got, maxpool, kind="forward", framework="jax") is None:
        raise Fail("EX07_MAX_POOL")
    ctx.assert_close(got, want, kind="forward", what=f"{call}(params, x)", framework="jax")


def _labels(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    return rng.integers(0, k, size=n).astype(np.int32)


def _judge_drift(ctx: Ctx, got: dict, want: dict, kind: str, what: dict) -> None:
    """Losses, then the params after the last step, that match the reference's for the first update and drift
    later: the step does not carry the optimizer state from one call to the next."""
    start = ctx.drift_start([*got["losses"], got["params"]], [*want["losses"], want["params"]], kind=kind,
                            framework="jax")
    if start is not None:
        raise Fail("EX07_STATE_NOT_CARRIED", what=what, step=start)


def _judge_steps(ctx: Ctx, call: str, kind: str, n: int, **kwargs: object) -> None:
    """Runs the train probe on both sides; losses first (with diagnoses), then the params after the steps.

    The reference's loss after each update (the probe's ``after``, a diagnosis aid for a step that reports
    the loss after its update) costs a compile of the loss: it is asked for only once the losses differ.
    """
    got, want = ctx.both("train", call=call, after=False, **kwargs)
    g, w = got["losses"], want["losses"]
    for gi, wi in zip(g, w, strict=True):
        if np.isfinite(wi) and not np.isfinite(gi):
            raise Fail("EX07_LOSS_OVERFLOW", got=gi)
    if ctx.difference(g, w, kind=kind, framework="jax") is not None:
        after = ctx.reference("train", after=True, **kwargs)["loss_after_update"]
        if ctx.difference(g, after, kind=kind, framework="jax") is None:
            raise Fail("EX07_LOSS_AFTER_UPDATE")
        if ctx.difference(g[0], n * w[0], kind=kind, framework="jax") is None:
            raise Fail("EX07_LOSS_SUM")
    _judge_drift(ctx, got, want, kind, label("ex07.what.step_losses"))
    ctx.assert_close(g, w, kind=kind, what=label("ex07.what.step_losses"), framework="jax")
    ctx.assert_close(got["params"], want["params"], kind=kind, what=label("ex07.what.step_params"),
                     framework="jax")


@suite.check(points=1)
def train_step_sgd(ctx: Ctx) -> None:
    """Two steps with `optax.sgd` (momentum): loss at the old params, same update as the reference."""
    n = int(ctx.rng.integers(8, 25))
    case, k = _case(ctx, n)
    xs = [case["x"], images(ctx.rng, n)]
    ys = [_labels(ctx.rng, n, k) for _ in xs]
    opt = {"name": "sgd", "learning_rate": float(ctx.rng.uniform(0.05, 0.2)), "momentum": 0.9}
    _judge_steps(ctx, label("ex07.call.sgd_steps"), "step", n,
                 num_classes=None, params=case["params"], xs=xs, ys=ys, opt=opt)


# Large logits: pixels scaled by LARGE_SCALE spread the logits of these params by ~0.5 x the
# scale (measured with the reference: x1000 -> max |logit| 300, spread 490), so a true class
# lies hundreds below the largest logit: exp underflows there (float32: below ~-88 with
# flush-to-zero, ~-104 without) and a hand-written -log(softmax(.)) gives inf, its gradient nan.
# optax's cross-entropy (log-softmax) stays finite, its gradient bounded; Adam normalises the
# large gradient, so the params stay comparable (kind "steps").
LARGE_SCALE = (1500.0, 3000.0)


@suite.check(points=1)
def train_step_adam(ctx: Ctx) -> None:
    """Four steps with `optax.adam`, the last on a batch with logits in the hundreds: losses and params follow
    the reference's (a hand-written `-log(softmax)` overflows there)."""
    n = int(ctx.rng.integers(8, 25))
    case, k = _case(ctx, n)
    scale = float(ctx.rng.uniform(*LARGE_SCALE))
    xs = [case["x"], images(ctx.rng, n), images(ctx.rng, n), scale * images(ctx.rng, n)]
    ys = [_labels(ctx.rng, n, k) for _ in xs]
    opt = {"name": "adam", "learning_rate": float(ctx.rng.uniform(1e-3, 1e-2))}
    _judge_steps(ctx, label("ex07.call.adam_steps"), "steps",
                 n, num_classes=None, params=case["params"], xs=xs, ys=ys, opt=opt)


@suite.check(points=1.5, timeout_scale=2.0)
def compiles_once_per_shape(ctx: Ctx) -> None:
    """The step is traced once for repeated same-shape calls, once more for a new batch size (counted by
    the probe and, as compiled programs, by the grader).

    Python code inside a jitted function runs only while JAX traces it, so the
    probe counts how often the model's `__call__` and `optimizer.update` run
    (calls per trace may be > 1, e.g. a loss computed twice; only the number
    of traces is judged). Batch sizes a, a, b, b, a: traces 1, 1, 2, 2, 2.
    """
    a, b = (int(v) for v in ctx.rng.choice(np.arange(4, 20), size=2, replace=False))
    case, k = _case(ctx, a)
    sizes = [a, a, b, b, a]
    xs = [images(ctx.rng, s) for s in sizes]
    ys = [_labels(ctx.rng, s, k) for s in sizes]
    ctx.student("trace_open", call="make_flax_train_step(model, optimizer)", num_classes=None,
                params=case["params"], n=a)
    m, u, compiled, traced = [], [], [], False
    for x, y in zip(xs, ys, strict=True):
        counts = ctx.student("trace_call", call="step(params, opt_state, x, y)", x=x, y=y)
        m.append(counts["model"])
        u.append(counts["update"])
        traced = counts["traced"]
        compiled.append(programs(ctx))
    per_trace = m[0]
    if m[-1] == 0:
        raise Fail("EX07_MODEL_UNUSED")
    if per_trace == 0 or m[1] != m[0]:
        if not traced:
            raise Fail("EX07_NOT_JITTED", calls=len(sizes), runs=m[-1])
        raise Fail("EX07_RETRACED", calls=len(sizes), runs=m[-1])
    if m[2] != 2 * per_trace or m[4] != m[2]:
        raise Fail("EX07_TRACE_COUNT", a=a, b=b, counts=", ".join(str(c // per_trace) for c in m))
    if u[1] > u[0] or u[4] > u[2]:
        raise Fail("EX07_UPDATE_EAGER", calls=len(sizes), runs=u[-1])
    compiled_once_per_shape(compiled, sizes, what="step", where="make_flax_train_step")


@suite.check(points=1, timeout_scale=3.0)
def learns_digits(ctx: Ctx) -> None:
    """Full-batch Adam (lr 3e-3, 256 images) with the student's step reaches good validation accuracy on digits."""
    shapes = ctx.both("param_shapes", call="FlaxCNN(num_classes=10).init", num_classes=10, n=2)
    diagnose_params(shapes[0]["variables"], shapes[1]["variables"])
    params = draw_params(ctx.rng, shapes[1]["variables"], bias_scale=0.0)
    got = ctx.student("fit_digits", call=label("ex07.call.digits", n=DIGITS_STEPS),
                      params=params, steps=DIGITS_STEPS, learning_rate=DIGITS_LR, n_train=DIGITS_TRAIN)
    if not np.isfinite(got["last_loss"]):
        raise Fail("NONFINITE", what=label("ex07.what.digits_loss"))
    if got["val_acc"] < DIGITS_BAR:
        raise Fail("EX07_NOT_LEARNING", steps=DIGITS_STEPS, acc=got["val_acc"])



def _mlp_case(ctx: Ctx, num_classes: int, n: int, steps: int) -> dict:
    """The probe's own classifier (Dense(h), tanh, Dense(num_classes) on (N, d) inputs): params, batches."""
    d, h = int(ctx.rng.integers(3, 9)), int(ctx.rng.integers(4, 13))
    shapes = {"params": {"Dense_0": {"kernel": [d, h], "bias": [h]},
                         "Dense_1": {"kernel": [h, num_classes], "bias": [num_classes]}}}
    return {"hidden": h, "num_classes": num_classes, "params": draw_params(ctx.rng, shapes),
            "xs": [ctx.rng.standard_normal((n, d)).astype(np.float32) for _ in range(steps)],
            "ys": [_labels(ctx.rng, n, num_classes) for _ in range(steps)]}


def _judge_any(ctx: Ctx, got: dict, want: dict, how: dict) -> None:
    """Losses and params of the step against the reference's; ``how``: a label saying with what it ran."""
    _judge_drift(ctx, got, want, "steps", label("ex07.what.any_losses", how=how))
    ctx.assert_close(got["losses"], want["losses"], kind="steps", what=label("ex07.what.any_losses", how=how),
                     framework="jax")
    ctx.assert_close(got["params"], want["params"], kind="steps", what=label("ex07.what.any_params", how=how),
                     framework="jax")


def _trains_like_reference(ctx: Ctx, case: dict, opt: dict, call: str) -> tuple[dict, dict] | StudentProblem | None:
    """None when the step trains ``case`` as the reference does; else the two results, or the exception."""
    try:
        got, want = ctx.both("train_any", call=call, optimizer=opt, **case)
    except StudentProblem as err:
        if err.key != "CALL_EXCEPTION":
            raise
        return err
    same = all(ctx.difference(got[k], want[k], kind="steps", framework="jax") is None for k in ("losses", "params"))
    return None if same else (got, want)


@suite.check(points=0.5)
def train_step_any_model_and_classes(ctx: Ctx) -> None:
    """The step trains any Flax classifier with any number of classes: a small MLP on flat inputs (not
    FlaxCNN) with k != 10 classes, 2 steps of SGD with momentum, as the reference. When it fails there but
    trains the same model with 10 classes, the class count is fixed somewhere in the step."""
    k = _other_num_classes(ctx.rng)
    n = int(ctx.rng.integers(8, 25))
    opt = {"name": "momentum", "lr": float(ctx.rng.uniform(0.05, 0.2))}
    case, ten = _mlp_case(ctx, k, n, steps=2), _mlp_case(ctx, 10, n, steps=2)
    outcome = _trains_like_reference(ctx, case, opt, label("ex07.call.classes", k=k))
    if outcome is None:
        return
    if _trains_like_reference(ctx, ten, opt, label("ex07.call.classes", k=10)) is None:
        raise Fail("EX07_STEP_FIXED_CLASSES", k=k)
    if isinstance(outcome, StudentProblem):
        raise outcome
    _judge_any(ctx, *outcome, label("ex07.how.other_model", k=k))


@suite.check(points=0.5)
def train_step_optimizers_needing_params(ctx: Ctx) -> None:
    """The step works with every optax optimizer, also those whose update needs the params: AdamW, a chain
    with add_decayed_weights, LAMB (2 steps each on a small classifier of 10 classes, as the reference)."""
    case = _mlp_case(ctx, 10, int(ctx.rng.integers(8, 25)), steps=2)
    for spec in optax_needing_params(ctx.rng):
        opt_label = optax_label(spec)
        got, want = ctx.both("train_any", call=f"make_flax_train_step(model, {opt_label})", optimizer=spec, **case)
        _judge_any(ctx, got, want, label("ex07.how.optimizer", opt=opt_label))
