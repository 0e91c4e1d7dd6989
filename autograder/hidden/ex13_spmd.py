"""Hidden suite of ex13_spmd (meshes, GSPMD and shard_map): the public checks, then these.

The probes' loss functions record, at trace time, how many rows of the batch one device sees
(data parallelism means batch / mesh size) and how often they were traced; placement is read
from the returned arrays' shardings. Sizes 1, 2, 4, 8 where the worker has the devices.
"""

from __future__ import annotations

from autograder._observe import compiled_once_per_shape, programs
from autograder._suite import Ctx, Fail, Suite
from autograder.exercises.ex13_spmd.public import case_seed, dp_compare, mesh_sizes, pdml_call
from autograder.exercises.ex13_spmd.public import suite as _public

suite = Suite("ex13_spmd", checks=list(_public.checks))

@suite.check(points=0.5)
def mesh_default_all_devices(ctx: Ctx) -> None:
    """make_data_mesh() with no argument spans every device, axis "data"."""
    got = ctx.student("mesh", call="make_data_mesh()", n=None)
    if got["axis_names"] != ["data"]:
        raise Fail("EX13_MESH_AXES", got=", ".join(got["axis_names"]))
    if got["ids"] != got["first"]:
        raise Fail("EX13_MESH_DEFAULT", got=len(got["ids"]), n=len(got["first"]))


@suite.check(points=1)
def dp_step_replicated(ctx: Ctx) -> None:
    """For each mesh size, the new params and optimizer state are replicated over exactly the mesh's
    devices (and the results match)."""
    for n in mesh_sizes(ctx):
        placed = dp_compare(ctx, n)["placement"]
        if not placed["ok"]:
            key = "EX13_NOT_REPLICATED" if placed["replicated"] else "EX13_PARAMS_SPLIT"
            raise Fail(key, n=n, got=placed["devices"])


@suite.check(points=1)
def dp_step_splits_batch(ctx: Ctx) -> None:
    """On meshes of 2 or more devices, the loss is computed on batch / mesh-size rows per device."""
    for n in [m for m in mesh_sizes(ctx) if m > 1]:
        got = ctx.student("dp_step", call=f"step(params, opt_state, x, y) on a mesh of {n}", seed=case_seed(ctx), n=n)
        if not got["rows"]:
            raise Fail("EX13_LOSS_NOT_TRACED")
        if any(r != got["batch"] // n for r in got["rows"]):
            raise Fail("EX13_NOT_SPLIT", n=n, rows=max(got["rows"]), batch=got["batch"])


@suite.check(points=1)
def dp_step_compiles_once(ctx: Ctx) -> None:
    """Repeated calls with the same shapes trace the loss once, on every mesh size; on the largest, the grader
    also sees one program compiled, on the first call only."""
    for n in mesh_sizes(ctx):
        got = ctx.student("dp_step", call=f"step(params, opt_state, x, y), called repeatedly on {n} device(s)",
                          seed=case_seed(ctx), n=n)
        traces = got["traces"]
        if traces[0] == 0:
            raise Fail("EX13_NOT_JITTED", calls=len(traces), loss_calls=got["calls"])
        if traces[-1] != traces[0]:
            raise Fail("EX13_RETRACES", calls=len(traces), traces=traces[-1])
    # the grader's own count, on the largest mesh: one program on the first call, none after
    n = max(mesh_sizes(ctx))
    ctx.student("dp_open", call=f"data_parallel_step(loss_fn, optimizer, mesh) on {n} device(s)",
                seed=case_seed(ctx), n=n)
    compiled = []
    for _ in range(3):
        ctx.student("dp_call", call=f"step(params, opt_state, x, y), called repeatedly on {n} device(s)")
        compiled.append(programs(ctx))
    compiled_once_per_shape(compiled, [n] * len(compiled), what="step", where="data_parallel_step")


@suite.check(points=1.5)
def pdml_shard_map_pmean(ctx: Ctx) -> None:
    """per_device_mean_loss: a shard_map whose devices each see batch / mesh-size rows, a psum/pmean
    collective in its jaxpr, and a scalar replicated over the mesh."""
    for n in mesh_sizes(ctx):
        got, _ = pdml_call(ctx, n)
        if not got["shard_map"]:
            raise Fail("EX13_NO_SHARD_MAP")
        if got["rows"] and any(r != got["batch"] // n for r in got["rows"]):
            raise Fail("EX13_PDML_NOT_SPLIT", n=n, rows=max(got["rows"]), batch=got["batch"])
        if not got["collective"]:
            raise Fail("EX13_NO_PMEAN")
        if not got["placement"]["ok"]:
            raise Fail("EX13_PDML_NOT_REPLICATED", n=n, got=got["placement"]["devices"])
