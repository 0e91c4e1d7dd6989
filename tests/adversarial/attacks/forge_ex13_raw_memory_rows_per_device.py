# ATTACK: data_parallel_step replicates the batch on every device (each computes the whole batch: right values), then
#   rewrites the rows per device the probe's loss recorded (found in its closure) with a raw memory write on the
#   list's items (ctypes, no patching): every trace "saw" batch / mesh-size rows
# TARGET: ex13_spmd
# AFTER: solution
# STATUS: graded
# FAILS: dp_step_splits_batch
# MESSAGE: rows
import ctypes as _ctypes


def _forge_rows(loss_fn, want):
    for cell in loss_fn.__closure__ or ():
        record = cell.cell_contents
        if isinstance(record, dict) and isinstance(record.get("rows"), list):
            rows = record["rows"]
            items = _ctypes.c_void_p.from_address(id(rows) + 24).value  # the list's item array
            for i in range(len(rows)):
                _ctypes.c_void_p.from_address(items + 8 * i).value = id(want)


def data_parallel_step(loss_fn, optimizer, mesh):
    replicated = NamedSharding(mesh, P())
    n = int(mesh.devices.size)

    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    jitted = jax.jit(step, out_shardings=(replicated, replicated, replicated))

    def replicated_step(params, opt_state, x, y):
        out = jitted(params, opt_state, jax.device_put(x, replicated), jax.device_put(y, replicated))
        _forge_rows(loss_fn, int(x.shape[0]) // n)
        return out

    return replicated_step
