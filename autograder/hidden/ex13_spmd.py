"""Hidden suite of ex13_spmd (meshes, GSPMD and shard_map): the public checks, then these.

The probes' loss functions record, at trace time, how many rows of the batch one device sees
(data parallelism means batch / mesh size) and how often they were traced; placement is read
from the returned arrays' shardings. Sizes 1, 2, 4, 8 where the worker has the devices.
"""

from __future__ import annotations

import numpy as np

from autograder.core.i18n import label
from autograder.core.suite import Ctx, Fail, StudentProblem, Suite, stricter
from autograder.exercises.ex13_spmd.public import case_seed, check_layout, dp_compare, mesh_sizes
from autograder.exercises.ex13_spmd.public import suite as _public
from autograder.probing.families import LARGE_GRADIENTS, optax_label, optax_needing_params
from autograder.probing.observe import compiled_once_per_shape, programs

suite = Suite("ex13_spmd", checks=list(_public.checks))

@suite.check(points=0.5)
def mesh_default_all_devices(ctx: Ctx) -> None:
    """make_data_mesh() with no argument spans every device, axis "data"."""
    got = ctx.student("mesh", call="make_data_mesh()", n=None)
    if got["axis_names"] != ["data"]:
        raise Fail("EX13_MESH_AXES", got=", ".join(got["axis_names"]))
    if got["ids"] != got["first"]:
        raise Fail("EX13_MESH_DEFAULT", got=len(got["ids"]), n=len(got["first"]))


@suite.check(points=0.5)
def dp_step_replicated(ctx: Ctx) -> None:
    """For each mesh size, the new params and optimizer state are replicated over exactly the mesh's
    devices (and the results match)."""
    for n in mesh_sizes(ctx):
        placed = dp_compare(ctx, n)["placement"]
        if not placed["ok"]:
            key = "EX13_NOT_REPLICATED" if placed["replicated"] else "EX13_PARAMS_SPLIT"
            raise Fail(key, n=n, got=placed["devices"])


def _off_rows(ctx: Ctx, rows: list[int], batch: int, n: int) -> int | None:
    """Rows per device of a trace that did not see ``batch / n`` rows, by the worker's record or by the grader's
    own count of the loss's tallies (each trace tallied ``trace`` and ``rows.<rows>``); None: every trace saw them.
    The grader's count is what a write into the worker's record cannot take back."""
    want = batch // n
    wrong = [r for r in rows if r != want]
    if wrong:
        return max(wrong)
    if ctx.counts("trace", len(rows)) == ctx.counts(f"rows.{want}", len(rows)):  # equal: the grader's counts agree
        return None
    seen = [r for r in sorted({batch // k for k in (1, 2, 4, 8)}, reverse=True) if r != want
            and ctx.counts(f"rows.{r}", 0)[1]]
    return seen[0] if seen else batch


@suite.check(points=1)
def dp_step_splits_batch(ctx: Ctx) -> None:
    """On meshes of 2 or more devices, the loss is computed on batch / mesh-size rows per device (a step built and
    run afresh: the grader counts its traces)."""
    for n in [m for m in mesh_sizes(ctx) if m > 1]:
        got = ctx.student("dp_step_with", call=label("ex13.call.step_mesh", n=n), seed=case_seed(ctx), n=n)
        traced, _ = ctx.counts("trace", len(got["rows"]))
        if not got["rows"] or not traced:
            raise Fail("EX13_LOSS_NOT_TRACED")
        batch = int(ctx.reference("dp_step", seed=case_seed(ctx), n=n)["batch"])  # the grader's, not the worker's
        off = _off_rows(ctx, got["rows"], batch, n)
        if off is not None:
            raise Fail("EX13_NOT_SPLIT", n=n, rows=off, batch=batch)


@suite.check(points=0.5)
def dp_step_compiles_once(ctx: Ctx) -> None:
    """Repeated calls with the same shapes trace the loss once, on every mesh size; on the largest, the grader
    also sees one program compiled, on the first call only. The step is built in one call and each step runs in
    a call of its own: the grader counts the loss's traces of each."""
    sizes = mesh_sizes(ctx)
    for n in sizes:
        ctx.student("dp_open", call=label("ex13.call.on_devices", code="data_parallel_step(loss_fn, optimizer, mesh)",
                                          n=n), seed=case_seed(ctx), n=n)
        built = ctx.counted("trace")
        steps, traced, compiled = [], [], []
        for _ in range(3):
            steps.append(ctx.student("dp_call", call=label("ex13.call.step_repeated", n=n)))
            traced.append(ctx.counted("trace"))
            if n == max(sizes):
                compiled.append(programs(ctx))
        traces = [int(s["traces"]) for s in steps]
        counted = built is not None and None not in traced  # None: nothing counted outside the worker
        first, _ = stricter(traces[0], built + traced[0] if counted else None)
        if first == 0:
            raise Fail("EX13_NOT_JITTED", calls=len(traces), loss_calls=steps[-1]["calls"])
        _, later = stricter(traces[-1] - traces[0], sum(traced[1:]) if counted else 0)
        if later:
            raise Fail("EX13_RETRACES", calls=len(traces), traces=max(traces[-1], first + later))
        if compiled:  # the grader's own count, on the largest mesh: one program on the first call, none after
            compiled_once_per_shape(compiled, [n] * len(compiled), what="step", where="data_parallel_step")


@suite.check(points=1)
def pdml_shard_map_pmean(ctx: Ctx) -> None:
    """per_device_mean_loss: a shard_map whose devices each see batch / mesh-size rows, a psum/pmean
    collective in its jaxpr, and a scalar replicated over the mesh (run afresh: the grader counts its traces)."""
    for n in mesh_sizes(ctx):
        got = ctx.student("pdml_with", call=label("ex13.call.on_devices",
                                                  code="per_device_mean_loss(loss_fn, params, x, y, mesh)", n=n),
                          seed=case_seed(ctx), n=n, kind="explicit")
        if not got["shard_map"]:
            raise Fail("EX13_NO_SHARD_MAP")
        batch = int(ctx.reference("pdml", seed=case_seed(ctx), n=n)["batch"])  # the grader's, not the worker's
        off = _off_rows(ctx, got["rows"], batch, n)
        if off is not None:
            raise Fail("EX13_PDML_NOT_SPLIT", n=n, rows=off, batch=batch)
        if not got["collective"]:
            raise Fail("EX13_NO_PMEAN")
        if not got["placement"]["ok"]:
            raise Fail("EX13_PDML_NOT_REPLICATED", n=n, got=got["placement"]["devices"])


def _dp_results(ctx: Ctx, got: dict, want: dict, how: dict) -> None:
    """Losses and params against the reference's; ``how``: a label naming the steps that ran. Losses (then the final
    params) that match for the first update and drift later: the optimizer state is not carried."""
    start = ctx.drift_start([*got["losses"], got["params"]], [*want["losses"], want["params"]], kind="step",
                            framework="jax")
    if start is not None:
        raise Fail("EX13_STATE_NOT_CARRIED", what=label("ex13.what.losses_of", how=how), step=start)
    ctx.assert_close(got["losses"], want["losses"], kind="step", framework="jax", what=label("ex13.what.losses_of", how=how))
    ctx.assert_close(got["params"], want["params"], kind="step", framework="jax", what=label("ex13.what.params_after", how=how))


@suite.check(points=0.5)
def dp_step_optimizers_needing_params(ctx: Ctx) -> None:
    """The data-parallel step works with every optax optimizer, also those whose update needs the params
    (AdamW, a chain with add_decayed_weights, LAMB): on the largest mesh here, the reference's losses and params.
    Then SGD with momentum on a loss scaled by 1000: the optimizer gets the gradients as they are, unclipped."""
    n = max(mesh_sizes(ctx))
    for spec in optax_needing_params(ctx.rng):
        opt_label = optax_label(spec)
        got, want = ctx.both("dp_step_with", call=label("ex13.call.step_from", opt=opt_label, mesh="mesh"),
                             seed=case_seed(ctx), n=n, optimizer=spec)
        _dp_results(ctx, got, want, label("ex13.how.steps_with", opt=opt_label, n=n))
    # gradients LARGE_GRADIENTS times the usual (families.py): a step that clips them differs only here
    got, want = ctx.both("dp_step_with", call=label("ex13.call.step_from", opt="optax.sgd(lr, momentum=0.9)",
                                                    mesh="mesh"), seed=case_seed(ctx), n=n, loss_scale=LARGE_GRADIENTS)
    if ctx.difference(got["losses"], want["losses"], kind="step", framework="jax") is not None \
            or ctx.difference(got["params"], want["params"], kind="step", framework="jax") is not None:
        raise Fail("EX13_GRADIENTS_CHANGED")  # right with the usual gradients (above), wrong with large ones


@suite.check(points=0.5)
def dp_step_keeps_inputs(ctx: Ctx) -> None:
    """After a call of the data-parallel step, the caller's params, opt_state and batch are all still usable: none
    was donated to the step (`donate_argnums` deletes them), as in exercise 05. On the largest mesh here."""
    n = max(mesh_sizes(ctx))
    got = ctx.student("dp_inputs_alive", call=label("ex13.call.step_mesh", n=n), seed=case_seed(ctx), n=n)
    if got["deleted"]:
        raise Fail("EX13_DONATED", what=", ".join(f"`{name}`" for name in got["deleted"]))


AUTO_MESH = "Mesh(devices, ('data',))"


def _on_auto(ctx: Ctx, probe: str, call: str, **kwargs: object) -> tuple[dict, dict]:
    """Both sides of a probe on the Auto mesh; an exception there is EX13_AUTO_MESH (it names the call)."""
    try:
        return ctx.both(probe, call=call, kind="auto", **kwargs)
    except StudentProblem as err:
        if err.key != "CALL_EXCEPTION":
            raise
        raise Fail("EX13_AUTO_MESH", call=call, error=err.fields.get("error", "")) from None


@suite.check(points=0.5)
def works_on_auto_mesh(ctx: Ctx) -> None:
    """Any 1-D mesh with axis "data": `jax.make_mesh` gives Explicit axes (the other checks), `Mesh(devices,
    ("data",))` Auto ones. On an Auto mesh of the largest size here, shard_batch splits the rows, and the
    data-parallel step and per_device_mean_loss give the reference's results."""
    n = max(mesh_sizes(ctx))
    rows = 8 * int(ctx.rng.integers(1, 5))
    x = ctx.rng.standard_normal((rows, int(ctx.rng.integers(2, 6)))).astype(np.float32)
    got, _ = _on_auto(ctx, "shard", label("ex13.call.on_devices", code=f"shard_batch(x, {AUTO_MESH})", n=n), x=x, n=n)
    if got["value"].shape != x.shape or ctx.difference(got["value"], x, kind="exact", framework="jax"):
        raise Fail("EX13_SHARD_VALUES")
    check_layout(got, n, rows)
    got, want = _on_auto(ctx, "dp_step_with", label("ex13.call.step_from", opt="optimizer", mesh=AUTO_MESH),
                         seed=case_seed(ctx), n=n)
    _dp_results(ctx, got, want, label("ex13.how.auto_steps", n=n))
    if not got["placement"]["ok"]:
        raise Fail("EX13_NOT_REPLICATED" if got["placement"]["replicated"] else "EX13_PARAMS_SPLIT", n=n,
                   got=got["placement"]["devices"])
    got, want = _on_auto(ctx, "pdml_with", f"per_device_mean_loss(loss_fn, params, x, y, {AUTO_MESH})",
                         seed=case_seed(ctx), n=n)
    ctx.assert_close(got["value"], want["value"], kind="step", framework="jax",
                     what=label("ex13.what.pdml_auto", n=n))
