# ATTACK: data_parallel_step replicates the batch on every device (each computes the whole batch: right values), and
#   the module makes jax.devices() report one device when the probe asks how many there are (jax's own
#   get_backend wrapped for that one caller): the checks on meshes of 2 or more devices are never run
# TARGET: ex13_spmd
# AFTER: solution
# STATUS: graded
# FAILS: dp_step_splits_batch
# MESSAGE: rows
import sys as _sys

_xb = _sys.modules["jax._src.xla_bridge"]
_real_get_backend = _xb.get_backend


class _OneDevice:
    def __init__(self, backend):
        self._backend = backend

    def devices(self):
        return self._backend.devices()[:1]

    def __getattr__(self, name):
        return getattr(self._backend, name)


def _get_backend(*args, **kwargs):
    backend = _real_get_backend(*args, **kwargs)
    if _sys._getframe(1).f_code.co_name == "devices" and _sys._getframe(2).f_code.co_name == "probe_devices":
        return _OneDevice(backend)
    return backend


_xb.get_backend = _get_backend


def data_parallel_step(loss_fn, optimizer, mesh):
    replicated = NamedSharding(mesh, P())

    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    jitted = jax.jit(step, out_shardings=(replicated, replicated, replicated))

    def replicated_step(params, opt_state, x, y):
        return jitted(params, opt_state, jax.device_put(x, replicated), jax.device_put(y, replicated))

    return replicated_step
