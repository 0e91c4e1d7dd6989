"""Hidden suite of ex05_jit_train_step (a jitted optax step): the public checks, then these.

The step is judged on *how* it is compiled: the probes' loss function and
optimizer count their own Python calls, which happen only while JAX traces,
so a compiled step shows one trace per input shape and an eager or
re-jitted one shows a trace per call.
"""

from __future__ import annotations

import numpy as np

from autograder.core.i18n import label as text
from autograder.core.suite import Ctx, Fail, Suite
from autograder.exercises.ex05_jit_train_step.public import check_losses, he_params, small_case
from autograder.exercises.ex05_jit_train_step.public import suite as _public
from autograder.probing.families import LARGE_GRADIENTS, optax_label, optax_needing_params
from autograder.probing.observe import compiled_once_per_shape, programs

suite = Suite("ex05_jit_train_step", checks=list(_public.checks))

FIT_STEPS = 300
FIT_LR = 0.01
# Over 1000 He-normal initialisations drawn like here, the reference's
# validation accuracy after 300 Adam steps at 0.01 ranged 0.92..0.94
# (median 0.93): the bar 0.9 leaves 2+ points of margin (100 val points).
FIT_MIN_ACC = 0.9
# fit builds one jitted step: the loss is traced once (a few times at most,
# e.g. a separate jitted evaluation); an eager or re-jitted step traces per call.
FIT_MAX_TRACES = 3
# Programs the grader may see fit compile, JAX's caches emptied first: the reference's fit compiles 9 (its
# step, an eager optax.adam init: one zeros per parameter shape, the probe's evaluation), one whose update
# runs eagerly (compiles_once's business) about 30; an eager fit about 80 (one per operation of a step),
# a re-jitted one a program per step.
FIT_MAX_PROGRAMS = 48


def _same_shape_cached(got: dict) -> None:
    """Repeated calls with one shape must not trace again."""
    loss = got["loss"]
    if loss[0] == 0:
        raise Fail("EX05_LOSS_NOT_CALLED")
    if loss[3] != loss[0]:
        key = "EX05_NOT_JITTED" if got["loss_traced"] == 0 else "EX05_RETRACES"
        raise Fail(key, calls=4, traces=loss[3] // loss[0])


@suite.check(points=1)
def step_any_optimizer(ctx: Ctx) -> None:
    """The step uses the optimizer it is given: sgd with momentum and adam both match the reference; then sgd
    with momentum on a loss scaled by 1000 (the optimizer gets the gradients as they are, unclipped)."""
    case = small_case(ctx.rng)
    for opt, lr, label in (("momentum", float(ctx.rng.uniform(0.02, 0.1)), "optax.sgd(lr, momentum=0.9)"),
                           ("adam", float(ctx.rng.uniform(0.005, 0.05)), "optax.adam(lr)")):
        got, want = ctx.both("steps", call=text("ex05.call.step_with", opt=label), opt=opt, lr=lr, n_steps=3, **case)
        check_losses(ctx, got["losses"], want["losses"], text("ex05.what.losses_with", opt=label),
                     params=(got["params"], want["params"]))
        ctx.assert_close(got["params"], want["params"], kind="steps", what=text("ex05.what.params_with", opt=label),
                         framework="jax")
    lr = float(ctx.rng.uniform(0.02, 0.1)) / LARGE_GRADIENTS
    got, want = ctx.both("steps", call=text("ex05.call.step_with", opt="optax.sgd(lr, momentum=0.9)"), opt="momentum",
                         lr=lr, n_steps=3, loss_scale=LARGE_GRADIENTS, **case)
    if ctx.difference(got["losses"], want["losses"], kind="steps", framework="jax") is not None \
            or ctx.difference(got["params"], want["params"], kind="steps", framework="jax") is not None:
        raise Fail("EX05_GRADIENTS_CHANGED")  # right at the usual gradients (above), wrong at large ones


def _trace_case(ctx: Ctx) -> dict:
    case = small_case(ctx.rng, n=32)
    nb = int(ctx.rng.integers(8, 24))
    d = case["x"].shape[1]
    return {"params": case["params"], "xa": case["x"], "ya": case["y"],
            "xb": ctx.rng.standard_normal((nb, d)).astype(np.float32),
            "yb": ctx.rng.integers(0, 2, size=nb).astype(np.float32)}


def _traces(ctx: Ctx, case: dict, order: str, call: str) -> dict:
    """The step called once per request on batches ``order`` (``"aaaa"``...): the probe's counters after
    each call (the trace probe's shape) and the programs the grader saw the worker compile per call."""
    ctx.student("trace_open", call="make_train_step(loss_fn, optimizer)", opt="adam",
                lr=float(ctx.rng.uniform(0.005, 0.05)), **case)
    got: dict = {"loss": [], "update": [], "programs": []}
    for batch in order:
        counts = ctx.student("trace_call", call=call, batch=batch)
        got["loss"].append(counts["loss"])
        got["update"].append(counts["update"])
        got["programs"].append(programs(ctx))
    got["loss_traced"], got["update_traced"] = counts["loss_traced"], counts["update_traced"]
    return got


@suite.check(points=2)
def compiles_once(ctx: Ctx) -> None:
    """4 calls with the same shapes trace the loss (and the optimizer update) exactly once, and the
    grader sees one program compiled, on the first call only."""
    case = _trace_case(ctx)
    order = "aaaa"
    got = _traces(ctx, case, order, text("ex05.call.four_times"))
    _same_shape_cached(got)
    upd = got["update"]
    if upd[0] == 0:
        raise Fail("EX05_OPTIMIZER_NOT_USED")
    if upd[3] != upd[0] or got["update_traced"] == 0:
        raise Fail("EX05_UPDATE_OUTSIDE_JIT")
    compiled_once_per_shape(got["programs"], order, what="step", where="make_train_step")


@suite.check(points=1)
def one_trace_per_new_shape(ctx: Ctx) -> None:
    """A new batch size traces exactly once more; shapes seen before are not traced again (counted by the
    probe's loss and, as compiled programs, by the grader)."""
    case = _trace_case(ctx)
    order = "aaaabba"
    got = _traces(ctx, case, order, text("ex05.call.new_batch"))
    _same_shape_cached(got)
    loss = got["loss"]
    per = loss[0]
    new = (loss[4] - loss[3]) / per
    if new != 1:
        raise Fail("EX05_SHAPE_TRACES", traces=f"{new:g}")
    if loss[6] != loss[4]:
        raise Fail("EX05_RETRACES_SEEN_SHAPE", traces=(loss[6] - loss[4]) // per)
    compiled_once_per_shape(got["programs"], order, what="step", where="make_train_step")


@suite.check(points=1)
def no_input_mutation(ctx: Ctx) -> None:
    """The step changes neither params nor opt_state it was given; same inputs give the same outputs."""
    case = small_case(ctx.rng)
    got = ctx.student("no_mutation", call="step(params, opt_state, x, y)", opt="adam",
                      lr=float(ctx.rng.uniform(0.005, 0.05)), **case)
    if got["changed"]:
        raise Fail("EX05_MUTATES", what=got["changed"])
    if not got["same_twice"]:
        raise Fail("EX05_NOT_PURE")


@suite.check(points=1, timeout_scale=3.0)
def fit_trains_moons(ctx: Ctx) -> None:
    """300 Adam steps at 0.01 on make_moons: >= 0.9 validation accuracy, one compiled step, reference start."""
    p = he_params(ctx.rng, [2, 32, 32, 1])
    # An un-jitted or re-jitted fit would take minutes (one compile per step) for the full run: the
    # probe's loss stops it at its (FIT_MAX_TRACES + 1)-th call.
    kwargs = {"params": p, "steps": FIT_STEPS, "learning_rate": FIT_LR, "return_params": False,
              "max_loss_calls": FIT_MAX_TRACES, "cold": True}
    got, want = ctx.both("fit", call=f"fit(params, x, y, steps={FIT_STEPS}, learning_rate={FIT_LR}, loss_fn=...)",
                         **kwargs)
    if got.get("stopped") or got["loss_calls"] > FIT_MAX_TRACES:
        raise Fail("EX05_FIT_RETRACES", steps=FIT_STEPS, traces=got["loss_calls"], most=FIT_MAX_TRACES)
    compiled = programs(ctx)  # the grader's own count: a compiled fit builds its step's program (and a few more)
    if compiled is not None and not 1 <= compiled <= FIT_MAX_PROGRAMS:
        raise Fail("EX05_FIT_PROGRAMS", steps=FIT_STEPS, programs=compiled, most=FIT_MAX_PROGRAMS)
    if len(got["losses"]) != FIT_STEPS:
        raise Fail("EX05_FIT_LENGTH", steps=FIT_STEPS, got=len(got["losses"]))
    check_losses(ctx, got["losses"][:5], want["losses"][:5], text("ex05.what.fit_first"), fit=True)
    if not np.isfinite(got["losses"]).all():
        raise Fail("NONFINITE", what=text("ex05.what.fit_losses"))
    if got["val_acc"] < FIT_MIN_ACC:
        raise Fail("EX05_FIT_ACCURACY", acc=f"{got['val_acc']:.3f}", bar=FIT_MIN_ACC, steps=FIT_STEPS)


@suite.check(points=0.5)
def step_optimizers_needing_params(ctx: Ctx) -> None:
    """The step works with every optax optimizer, also those whose update needs the params: AdamW, a chain
    with add_decayed_weights, LAMB (3 steps each, same losses and params as the reference)."""
    case = small_case(ctx.rng)
    for spec in optax_needing_params(ctx.rng):
        label = optax_label(spec)
        got, want = ctx.both("steps_family", call=text("ex05.call.step_with", opt=label), optimizer=spec, n_steps=3, **case)
        check_losses(ctx, got["losses"], want["losses"], text("ex05.what.losses_with", opt=label),
                     params=(got["params"], want["params"]))
        ctx.assert_close(got["params"], want["params"], kind="steps", what=text("ex05.what.params_with", opt=label),
                         framework="jax")


def _large(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Entries of size 1e3..1e4, random signs: a weight decay of even 1e-6 shows in an update."""
    return (rng.choice([-1.0, 1.0], size=shape) * rng.uniform(1e3, 1e4, size=shape)).astype(np.float32)


@suite.check(points=0.5)
def fit_steps_adam(ctx: Ctx) -> None:
    """`fit` hands make_train_step optax.adam(learning_rate): the optimizer it makes is run on large params
    and given gradients, and its updates must be Adam's exactly (AdamW, other betas, a fixed rate differ)."""
    lr = float(ctx.rng.choice([ctx.rng.uniform(0.002, 0.006), ctx.rng.uniform(0.02, 0.05)]))  # never 0.01
    probe_params = {"w": _large(ctx.rng, (3, 2)), "b": _large(ctx.rng, (2,))}
    grads = [{k: ctx.rng.standard_normal(v.shape).astype(np.float32) for k, v in probe_params.items()}
             for _ in range(3)]
    got, want = ctx.both("fit_optimizer", call=f"fit(params, x, y, steps=2, learning_rate={lr:.4g}, loss_fn=...)",
                         params=he_params(ctx.rng, [2, 32, 32, 1]), steps=2, learning_rate=lr,
                         probe_params=probe_params, grads=grads)
    if ctx.difference(got["updates"], want["updates"], kind="exact", framework="jax"):
        raise Fail("EX05_FIT_OPTIMIZER")
