"""Hidden suite of ex11_torch_compile (torch.compile): the public checks, then these.

The compile checks read Dynamo's own count of the graphs it captured (reset per probe), a tensor
flag the probe's loss writes from inside or outside a compiled graph, and the number of
``torch.compile`` calls; see ``autograder/exercises/ex11_torch_compile/probes.py``. Graphs and
``torch.compile`` calls are also tallied in the grader's process as they happen: the counts kept in the
worker can be rewritten there, the grader's cannot be taken back, and the stricter of the two is judged. So is
each eager call of the probe's loss: a flag filled with 1 afterwards does not hide one.
"""

from __future__ import annotations

import numpy as np

from autograder.core.i18n import label
from autograder.core.suite import Ctx, Fail, Suite, stricter
from autograder.exercises.ex11_torch_compile.public import (
    any_batch_case,
    check_step_losses,
    clip_case,
    report_case,
    step_case,
)
from autograder.exercises.ex11_torch_compile.public import suite as _public
from autograder.probing.families import LARGE_GRADIENTS, torch_label, torch_optimizers

suite = Suite("ex11_torch_compile", checks=list(_public.checks))

CAPTURE_STEPS = 5


@suite.check(points=0.5)
def clip_gradient(ctx: Ctx) -> None:
    """The gradient of sum(w * clip_by_norm(x, max_norm)) matches the reference's, above and below max_norm."""
    for above in (True, False):
        case = clip_case(ctx.rng, above=above)
        w = ctx.rng.standard_normal(case["x"].shape).astype(np.float32)
        got, want = ctx.both("clip_grad", call=label("ex11.call.clip_grad"), w=w, **case)
        side = "above" if above else "below"
        ctx.assert_close(got["grad"], want["grad"], kind="step",
                         what=label(f"ex11.what.clip_grad_{side}"))


@suite.check(points=0.5)
def graph_report_many(ctx: Ctx) -> None:
    """graph_report on functions with 2 breaks, a break per loop pass, .item() and a data-dependent if."""
    for fn in ("two_breaks", "loop", "item", "branch"):
        report_case(ctx, fn)


@suite.check(points=1.5)
def any_batch_compiles_once(ctx: Ctx) -> None:
    """Over 6 batch sizes (the first one twice) the compiled model captures exactly one graph."""
    case = any_batch_case(ctx, 6)
    got = ctx.student("any_batch", call='compile_for_any_batch(model, "eager")(x)', backend="eager", **case)
    graphs = got["graphs"]
    low, high = ctx.counts("graph", graphs[-1])
    if low == 0:  # nn.Module.compile on an nn.Sequential captures nothing in this torch: say so, not "no backend"
        raise Fail("EX11_ANY_BATCH_MODULE_COMPILE" if got.get("module_compile") else "EX11_ANY_BATCH_NOT_COMPILED")
    if high > 1:
        first = next((i for i, g in enumerate(graphs) if g > 1), len(graphs) - 1)
        raise Fail("EX11_ANY_BATCH_RECOMPILES", graphs=high, calls=len(graphs), at=first + 1)


@suite.check(points=1.5)
def compiled_step_captures_once(ctx: Ctx) -> None:
    """5 steps (backend "eager", plain SGD): the loss runs in the captured graph, no new graph and no new
    torch.compile call after the first step, and the results match the reference. (Not Adam: on one
    batch, gradients that accumulate without zero_grad only grow in scale, which Adam normalises away.)
    The step is built in one call and each step runs in a call of its own: the grader counts the graphs
    and torch.compile calls of each."""
    case = step_case(ctx.rng, CAPTURE_STEPS)
    lr = float(ctx.rng.uniform(0.2, 0.5))
    kwargs = {"opt": "sgd_plain", "lr": lr, "backend": "eager", **case}
    ctx.student("train_open", call=label("ex11.call.step_from", backend="eager"), **kwargs)
    built = ctx.counted("graph")
    steps, graphs, compiles, eager = [], [], [], []  # per step: the worker's answer, the grader's counts of its tallies
    for i in range(CAPTURE_STEPS):
        steps.append(ctx.student("train_call", call=label("ex11.call.step_from", backend="eager"), step=i))
        graphs.append(ctx.counted("graph"))
        compiles.append(ctx.counted("compile"))
        eager.append(ctx.counted("loss_eager"))
    counted = built is not None and None not in graphs
    first, _ = stricter(steps[0]["graphs"], (built or 0) + (graphs[0] or 0) if counted else None)
    if first == 0:
        raise Fail("EX11_STEP_NOT_COMPILED")
    _, rewraps = stricter(sum(s["compiles"] for s in steps[1:]),
                           sum(c or 0 for c in compiles[1:]) if None not in compiles else None)
    if rewraps:
        raise Fail("EX11_STEP_REWRAPS", calls=rewraps, steps=CAPTURE_STEPS - 1)
    _, later = stricter(steps[-1]["graphs"] - steps[0]["graphs"], sum(graphs[1:]) if counted else None)
    if later > 0:
        raise Fail("EX11_STEP_RECOMPILES", graphs=later, steps=CAPTURE_STEPS - 1)
    flags = [s["loss_compiled"] for s in steps]
    if min(flags) < 0 and not any(eager):
        raise Fail("EX11_LOSS_NOT_CALLED")
    if min(flags) < 1 or any(eager):  # an eager call of the loss, as the grader counted it: the flag cannot undo it
        raise Fail("EX11_LOSS_EAGER")
    want = ctx.reference("train_compiles", **kwargs)
    check_step_losses(ctx, [s["loss"] for s in steps], want["losses"], label("ex11.what.sgd_losses", n=CAPTURE_STEPS))
    ctx.assert_close(steps[-1]["state"], want["state"], kind="steps",
                     what=label("ex11.what.params_after_sgd", n=CAPTURE_STEPS))


@suite.check(points=0.5)
def clip_gradient_at_zero(ctx: Ctx) -> None:
    """At x = 0, as wherever ||x|| < max_norm, clip_by_norm is the identity: the gradient of
    sum(w * clip_by_norm(zeros, max_norm)) is w, finite (the stub says so)."""
    case = clip_case(ctx.rng, above=False)
    case["x"] = np.zeros_like(case["x"])
    w = ctx.rng.standard_normal(case["x"].shape).astype(np.float32)
    got, want = ctx.both("clip_grad", call=label("ex11.call.clip_grad_zero"), w=w, **case)
    if not np.isfinite(got["grad"]).all():
        raise Fail("EX11_CLIP_GRAD_ZERO")
    ctx.assert_close(got["grad"], want["grad"], kind="step", what=label("ex11.what.clip_grad_zero"))


def _stale(rng: np.random.Generator, params: list[np.ndarray]) -> list[np.ndarray]:
    """Gradients for the probe's model (Linear, BatchNorm1d, ReLU, Linear), in parameters() order."""
    w1, b1, w2, b2 = params
    shapes = [w1.shape, b1.shape, b1.shape, b1.shape, w2.shape, b2.shape]
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


@suite.check(points=0.5)
def compiled_step_clears_old_gradients(ctx: Ctx) -> None:
    """Gradients already on the parameters when the first step runs (as an earlier backward leaves them) must not
    reach the update: 3 steps with SGD (momentum) and with AdamW (weight decay), backend "eager", match the
    reference's. Zeroing after optimizer.step() is right only while the gradients start at zero. Then 3 steps
    with gradients ~1000 times the usual (targets scaled by 1000): the optimizer gets the gradients backward() left, unclipped."""
    case = step_case(ctx.rng, 3)
    stale = _stale(ctx.rng, case["params"])
    for spec in torch_optimizers(ctx.rng, ("sgd_momentum", "adamw")):
        opt_label = torch_label(spec)
        kwargs = {"optimizer": spec, "backend": "eager", **case}
        got, want = ctx.both("train_with", call=label("ex11.call.stale_with", opt=opt_label),
                             stale=stale, **kwargs)
        if ctx.difference(got["state"], want["state"], kind="steps") is None:
            check_step_losses(ctx, got["losses"], want["losses"], label("ex11.what.losses_with", opt=opt_label))
            continue
        fresh, fresh_want = ctx.both("train_with", call=label("ex11.call.step_with", opt=opt_label), **kwargs)
        if ctx.difference(fresh["state"], fresh_want["state"], kind="steps") is None:
            raise Fail("EX11_STALE_GRADS")
        check_step_losses(ctx, fresh["losses"], fresh_want["losses"], label("ex11.what.losses_with", opt=opt_label))
        ctx.assert_close(got["state"], want["state"], kind="steps",
                         what=label("ex11.what.params_with", opt=opt_label))
    # gradients ~LARGE_GRADIENTS times the usual (families.py): the squared error's targets scaled by it (the loss is
    # the probe's own, traced by Dynamo); a step that clips them differs only here
    spec = {"name": "sgd_momentum", "lr": float(ctx.rng.uniform(0.05, 0.2)) / LARGE_GRADIENTS}
    large = dict(case, ys=[(y * LARGE_GRADIENTS).astype(np.float32) for y in case["ys"]])
    got, want = ctx.both("train_with", call=label("ex11.call.step_with", opt=torch_label(spec)),
                         optimizer=spec, backend="eager", **large)
    if ctx.difference(got["state"], want["state"], kind="steps") is not None \
            or ctx.difference(got["losses"], want["losses"], kind="steps") is not None:
        raise Fail("EX11_GRADIENTS_CHANGED")  # right at the usual gradients (above), wrong at large ones
