"""Probes for ex13_spmd: meshes, shardings and a data-parallel step, measured on the devices there are.

The meshes handed to ``shard_batch``, ``data_parallel_step`` and ``per_device_mean_loss`` are the
probe's own (``jax.make_mesh`` over the first n devices, explicit axes where this JAX has them), and
so are the loss functions: each records, while JAX traces it, how many rows of the batch one device
holds — the local shape inside ``shard_map``, or the shard shape of the batch's sharded type under
``jax.jit`` (explicit sharding) — and how often it was traced; each trace is also tallied in the grader's
process as it happens (``tally``: ``trace``, and ``rows.<rows per device>``), so a write into the worker's
record cannot take one back (docs/security.md, "Structural checks"). The grader's worker has 8 CPU
devices (``META.cpu_devices`` in ``__init__.py``, applied by ``autograder.workers.worker`` before JAX starts); in a notebook the
probes use whatever devices the runtime has.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from autograder.core.i18n import label
from autograder.probing.optax_family import optax_optimizer, run_without_params_check
from autograder.probing.tools import (
    ProbeFail,
    get,
    instance_of,
    jax_converter,
    tally,
    to_float,
    tree_to_np,
    type_name,
    walk_jaxpr,
)

# Bound at import, before student code loads.
_asarray = jax_converter()
_devices = jax.devices
_device_put = jax.device_put
_make_mesh = jax.make_mesh
_make_jaxpr = jax.make_jaxpr
_jit = jax.jit
_typeof = getattr(jax, "typeof", None)
_leaves = jax.tree_util.tree_leaves
_Tracer = jax.core.Tracer
_Array = jax.Array
_Mesh = Mesh
_tanh = jnp.tanh
_mean = jnp.mean
_sgd = optax.sgd
_AxisType = getattr(jax.sharding, "AxisType", None)
_clear_caches = jax.clear_caches

COLLECTIVES = ("psum", "pmean")  # psum, psum2, psum_invariant, pmean... (names vary by JAX version)


def probe_devices(mod: Any, note: bool = False) -> dict[str, Any]:
    """How many devices JAX has here, and its platform; ``note``: say so when there is one only."""
    count, platform = len(_devices()), str(_devices()[0].platform)
    if note and count < 2:
        from autograder.core.i18n import render
        from autograder.student import get_language

        key = "EX13_NOTE_ONE_CPU_DEVICE" if platform == "cpu" else "EX13_NOTE_ONE_DEVICE"
        print(render(key, get_language(), platform=platform))
    return {"count": count, "platform": platform}


def mesh_of(n: int) -> Mesh:
    """The probe's mesh: the first ``n`` devices, axis "data" (explicit sharding where available)."""
    devs = _devices()[:n]
    if _AxisType is not None:
        try:
            return _make_mesh((n,), ("data",), axis_types=(_AxisType.Explicit,), devices=devs)
        except TypeError:
            pass
    return _Mesh(np.array(devs), ("data",))


def auto_mesh_of(n: int) -> Mesh:
    """The first ``n`` devices as ``Mesh(devices, ("data",))``: axes of the default type, Auto (GSPMD decides
    what the compiler does with them), where :func:`mesh_of` gives Explicit ones. The contract accepts both."""
    return _Mesh(np.array(_devices()[:n]), ("data",))


def _mesh(n: int, kind: str) -> Mesh:
    return auto_mesh_of(n) if kind == "auto" else mesh_of(n)


def _ids(devices: Any) -> list[int]:
    return sorted(int(d.id) for d in devices)


# ----------------------------------------------------------------------------- make_data_mesh
def probe_mesh(mod: Any, n: int | None) -> dict[str, Any]:
    """``make_data_mesh(n)`` (or ``make_data_mesh()`` for None): axis names, shape, device ids."""
    fn = get(mod, "make_data_mesh")
    mesh = fn() if n is None else fn(n)
    call = "make_data_mesh()" if n is None else f"make_data_mesh({n})"
    if not isinstance(mesh, _Mesh):
        raise ProbeFail("WRONG_TYPE", call=call, got=type_name(mesh), expected=instance_of("jax.sharding.Mesh"))
    want = len(_devices()) if n is None else n
    return {"axis_names": [str(a) for a in mesh.axis_names], "shape": [int(s) for s in mesh.devices.shape],
            "ids": _ids(mesh.devices.flat), "first": _ids(_devices()[:want])}


# ----------------------------------------------------------------------------- shard_batch
def _layout(arr: Any, mesh: Mesh, call: str) -> dict[str, Any]:
    """Where the rows of ``arr`` live: ``[device id, first row, end row]`` per addressable shard."""
    if not isinstance(arr, _Array):
        raise ProbeFail("WRONG_TYPE", call=call, got=type_name(arr), expected=instance_of("jax.Array"))
    shards = []
    for s in arr.addressable_shards:
        rows = s.index[0] if s.index else slice(None)
        start, stop, _ = rows.indices(arr.shape[0]) if arr.ndim else (0, 1, 1)
        shards.append([int(s.device.id), int(start), int(stop)])
    return {"value": tree_to_np(arr, call), "shards": sorted(shards, key=lambda t: (t[1], t[0])),
            "mesh_ids": _ids(mesh.devices.flat), "replicated": bool(arr.sharding.is_fully_replicated),
            "device_ids": _ids(arr.sharding.device_set)}


def probe_shard(mod: Any, x: np.ndarray, n: int, kind: str = "explicit") -> dict[str, Any]:
    """``shard_batch(x, mesh)`` on the probe's mesh of ``n`` devices (``kind``: "explicit" or "auto" axes):
    the values and the row layout."""
    mesh = _mesh(n, kind)
    out = get(mod, "shard_batch")(_asarray(x), mesh)
    return _layout(out, mesh, "shard_batch(x, mesh)")


# ----------------------------------------------------------------------------- the losses
def _rows_per_device(x: Any) -> int:
    """Rows of ``x`` one device holds, as seen while tracing: local shape, or the sharded type's shard."""
    rows = int(x.shape[0])
    sharding = getattr(_typeof(x), "sharding", None) if _typeof is not None else None
    spec, mesh = getattr(sharding, "spec", None), getattr(sharding, "mesh", None)
    if spec is None or mesh is None or not len(spec) or spec[0] is None:
        return rows
    names = spec[0] if isinstance(spec[0], tuple) else (spec[0],)
    split = math.prod(int(dict(mesh.shape).get(a, 1)) for a in names)
    return rows // max(split, 1)


def _make_loss(record: dict[str, Any], scale: float = 1.0) -> Any:
    """tanh-regression MSE of a one-layer model (multiplied by ``scale``, so its gradients too); records traces
    and rows per device, each trace also tallied in the grader's process (``trace`` and ``rows.<rows>``)."""

    def loss_fn(params: dict, x: jax.Array, y: jax.Array, *, _tally: Any = tally) -> jax.Array:
        # the tally bound when the probe module loaded, held in a default (the audit hook refuses replacing it)
        record["calls"] += 1
        if isinstance(x, _Tracer):
            rows = _rows_per_device(x)
            record["traces"] += 1
            record["rows"].append(rows)
            _tally("trace")
            _tally(f"rows.{rows}")
        z = _tanh(x @ params["w"] + params["b"])
        loss = _mean((z - y) ** 2)
        return loss * scale if scale != 1.0 else loss

    return loss_fn


def _record() -> dict[str, Any]:
    return {"calls": 0, "traces": 0, "rows": []}


def _placed(params: dict, x: np.ndarray, y: np.ndarray, mesh: Mesh) -> tuple[Any, Any, Any]:
    """Params replicated, the batch split over "data" (numpy copies put straight on the devices)."""
    rep, data = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    p = {k: _device_put(np.array(v, copy=True), rep) for k, v in params.items()}
    return p, _device_put(np.array(x, copy=True), data), _device_put(np.array(y, copy=True), data)


def dp_case(seed: int) -> dict[str, Any]:
    """The data-parallel problem of one grading seed (drawn here, the same in every worker): a one-layer
    tanh regression with a batch divisible by 8, and the learning rate of SGD with momentum (plain
    gradients, unlike Adam's normalised first steps, show any error in the averaged gradient)."""
    rng = np.random.default_rng(seed)
    d, k = int(rng.integers(2, 7)), int(rng.integers(1, 4))
    n = 8 * int(rng.integers(2, 6))
    params = {"w": (rng.standard_normal((d, k)) / np.sqrt(d)).astype(np.float32),
              "b": (0.1 * rng.standard_normal(k)).astype(np.float32)}
    return {"params": params, "x": rng.standard_normal((n, d)).astype(np.float32),
            "y": rng.uniform(-0.9, 0.9, (n, k)).astype(np.float32), "lr": float(rng.uniform(0.2, 0.5))}


class _Memo:
    """Results of one probe per (student function, arguments): the checks share one compile per mesh size.

    Keyed by the function object itself (held here), so a notebook cell run again (new functions)
    is measured again.
    """

    def __init__(self) -> None:
        self.fn: Any = None
        self.values: dict[Any, Any] = {}

    def get(self, fn: Any, key: Any, compute: Any) -> Any:
        if fn is not self.fn:
            self.fn, self.values = fn, {}
        if key not in self.values:
            self.values[key] = compute()
        return self.values[key]


_DP_MEMO, _PDML_MEMO = _Memo(), _Memo()


def _on_mesh(tree: Any, mesh: Mesh) -> dict[str, Any]:
    """Whether every leaf is a jax.Array fully replicated over exactly the mesh's devices; else the
    first offending leaf's device count and whether it is replicated."""
    want = _ids(mesh.devices.flat)
    for leaf in _leaves(tree):
        if not isinstance(leaf, _Array):
            raise ProbeFail("WRONG_TYPE", call="step(params, opt_state, x, y)", got=label("value.leaf", item=type_name(leaf)),
                            expected=label("value.jax_arrays"))
        ids = _ids(leaf.sharding.device_set)
        if ids != want or not leaf.sharding.is_fully_replicated:
            return {"ok": False, "devices": len(ids), "replicated": bool(leaf.sharding.is_fully_replicated)}
    return {"ok": True, "devices": len(want), "replicated": True}


# ----------------------------------------------------------------------------- data_parallel_step
DP_STEPS = 3


def probe_dp_step(mod: Any, seed: int, n: int) -> dict[str, Any]:
    """``DP_STEPS`` steps (SGD with momentum) of the student's step on a mesh of ``n``, on :func:`dp_case` ``(seed)``:
    losses, final params, placement of params and state, traces after each call, rows per device."""
    make = get(mod, "data_parallel_step")
    return _DP_MEMO.get(make, (seed, n), lambda: _dp_run(make, dp_case(seed), n))


def _dp_run(make: Any, case: dict[str, Any], n: int, kind: str = "explicit",
            optimizer_spec: dict[str, Any] | None = None, loss_scale: float = 1.0) -> dict[str, Any]:
    mesh = _mesh(n, kind)
    record = _record()
    optimizer = _sgd(case["lr"] / loss_scale, momentum=0.9) if optimizer_spec is None \
        else optax_optimizer(optimizer_spec)
    step = make(_make_loss(record, loss_scale), optimizer, mesh)
    if not callable(step):
        raise ProbeFail("WRONG_TYPE", call="data_parallel_step(loss_fn, optimizer, mesh)", got=type_name(step),
                        expected=label("value.function", code="step(params, opt_state, x, y)"))
    p, xs, ys = _placed(case["params"], case["x"], case["y"], mesh)
    s = _jit(optimizer.init, out_shardings=NamedSharding(mesh, P()))(p)
    call = "step(params, opt_state, x, y)"
    losses, traces, placement = [], [], {"ok": True}
    for _ in range(DP_STEPS):
        out = run_without_params_check(step, p, s, xs, ys, key="EX13_UPDATE_NO_PARAMS")
        if type(out) not in (tuple, list) or len(out) != 3:
            got = label("value.items", name=type(out).__name__, n=len(out)) if type(out) in (tuple, list) else type_name(out)
            raise ProbeFail("EX13_STEP_RETURNS", got=got)
        p, s, loss = out
        if isinstance(loss, _Array) and loss.shape != ():
            raise ProbeFail("WRONG_TYPE", call=call, got=label("value.loss_shape", shape=str(tuple(loss.shape))),
                            expected=label("value.scalar_loss"))
        if placement["ok"]:
            placement = _on_mesh({"params": p, "opt_state": s}, mesh)
        losses.append(to_float(loss, call, strict=False))
        traces.append(record["traces"])
    return {"losses": losses, "params": tree_to_np(p, "step(params, opt_state, x, y)[0]"), "placement": placement,
            "traces": traces, "calls": record["calls"], "rows": record["rows"], "batch": int(case["x"].shape[0])}


# ----------------------------------------------------------------------------- per_device_mean_loss
def probe_pdml(mod: Any, seed: int, n: int) -> dict[str, Any]:
    """``per_device_mean_loss`` on a mesh of ``n`` and :func:`dp_case` ``(seed)``: value, placement, rows
    per device, whether its jaxpr holds a shard_map and a psum/pmean collective."""
    fn = get(mod, "per_device_mean_loss")
    return _PDML_MEMO.get(fn, (seed, n), lambda: _pdml_run(fn, dp_case(seed), n))


def _pdml_run(fn: Any, case: dict[str, Any], n: int, kind: str = "explicit") -> dict[str, Any]:
    mesh = _mesh(n, kind)
    p, xs, ys = _placed(case["params"], case["x"], case["y"], mesh)
    record = _record()
    loss_fn = _make_loss(record)

    def call_it(a: Any, b: Any, c: Any) -> Any:
        return fn(loss_fn, a, b, c, mesh)

    closed = _make_jaxpr(call_it)(p, xs, ys)
    _, prims = walk_jaxpr(closed.jaxpr)
    call = "per_device_mean_loss(loss_fn, params, x, y, mesh)"
    try:
        out = _jit(call_it)(p, xs, ys)  # one compile instead of op-by-op dispatch on every device
    except Exception:  # noqa: BLE001 - not jit-able: measure it as it runs
        out = call_it(p, xs, ys)
    if not isinstance(out, _Array):
        raise ProbeFail("WRONG_TYPE", call=call, got=type_name(out), expected=label("value.scalar_of", code="jax.Array"))
    if out.shape != ():
        raise ProbeFail("EX13_PDML_SHAPE", got=str(tuple(out.shape)))
    return {"value": float(np.asarray(out)), "placement": _on_mesh(out, mesh), "rows": record["rows"],
            "shard_map": "shard_map" in prims,
            "collective": any(q.startswith(COLLECTIVES) for q in prims), "batch": int(case["x"].shape[0])}


# ----------------------------------------------------------------------------- one call per request
# dp_step_compiles_once also calls the step once per request, so the grader sees, call by call, which
# programs the worker compiled (autograder.probing.observe), beside the loss's trace counter, which lives in the
# student's process.
_SESSION: dict[str, Any] = {}


def probe_dp_open(mod: Any, seed: int, n: int) -> dict[str, Any]:
    """Builds the student's step on a mesh of ``n`` for :func:`dp_case` ``(seed)``; calls nothing yet. JAX's
    in-memory caches are emptied first, so what the step compiles does not depend on earlier checks."""
    _SESSION.clear()
    _clear_caches()
    case, mesh = dp_case(seed), mesh_of(n)
    record = _record()
    optimizer = _sgd(case["lr"], momentum=0.9)
    step = get(mod, "data_parallel_step")(_make_loss(record), optimizer, mesh)
    if not callable(step):
        raise ProbeFail("WRONG_TYPE", call="data_parallel_step(loss_fn, optimizer, mesh)", got=type_name(step),
                        expected=label("value.function", code="step(params, opt_state, x, y)"))
    p, xs, ys = _placed(case["params"], case["x"], case["y"], mesh)
    s = _jit(optimizer.init, out_shardings=NamedSharding(mesh, P()))(p)
    _SESSION.update(step=step, state=[p, s], batch=(xs, ys), record=record)
    return {}


def probe_dp_call(mod: Any) -> dict[str, int]:
    """One call of the step opened by :func:`probe_dp_open`, feeding back params and state: the loss's traces
    and calls so far (each trace also tallied in the grader's process, call by call)."""
    p, s = _SESSION["state"]
    out = _SESSION["step"](p, s, *_SESSION["batch"])
    if type(out) not in (tuple, list) or len(out) != 3:
        got = label("value.items", name=type(out).__name__, n=len(out)) if type(out) in (tuple, list) else type_name(out)
        raise ProbeFail("EX13_STEP_RETURNS", got=got)
    p, s, loss = out
    to_float(loss, "step(params, opt_state, x, y)", strict=False)
    _SESSION["state"] = [p, s]
    return {"traces": int(_SESSION["record"]["traces"]), "calls": int(_SESSION["record"]["calls"])}
# ----------------------------------------------------------------------------- other meshes and optimizers
def probe_dp_step_with(mod: Any, seed: int, n: int, kind: str = "explicit",
                       optimizer: dict[str, Any] | None = None, loss_scale: float = 1.0) -> dict[str, Any]:
    """:func:`probe_dp_step` on a mesh with ``kind`` axes ("explicit" or "auto") and, when given, an optimizer
    of ``autograder.probing.families`` (an update without params for one that needs them: ``EX13_UPDATE_NO_PARAMS``).
    ``loss_scale``: the loss multiplied by it (its gradients too) and SGD's rate divided by it."""
    return _dp_run(get(mod, "data_parallel_step"), dp_case(seed), n, kind, optimizer, loss_scale)


def probe_pdml_with(mod: Any, seed: int, n: int, kind: str) -> dict[str, Any]:
    """:func:`probe_pdml` on a mesh with ``kind`` axes ("explicit" or "auto")."""
    return _pdml_run(get(mod, "per_device_mean_loss"), dp_case(seed), n, kind)


# ----------------------------------------------------------------------------- inputs left usable
def probe_dp_inputs_alive(mod: Any, seed: int, n: int) -> dict[str, Any]:
    """One call of a fresh data-parallel step on a mesh of ``n`` (:func:`dp_case` ``(seed)``, SGD with momentum): the
    inputs the call left deleted (``jax.Array.is_deleted()``, what ``donate_argnums`` does to a caller's arrays),
    by name in ``step(params, opt_state, x, y)``; ``[]`` when every one is still usable."""
    case, mesh = dp_case(seed), mesh_of(n)
    optimizer = _sgd(case["lr"], momentum=0.9)
    step = get(mod, "data_parallel_step")(_make_loss(_record()), optimizer, mesh)
    if not callable(step):
        raise ProbeFail("WRONG_TYPE", call="data_parallel_step(loss_fn, optimizer, mesh)", got=type_name(step),
                        expected=label("value.function", code="step(params, opt_state, x, y)"))
    p, xs, ys = _placed(case["params"], case["x"], case["y"], mesh)
    s = _jit(optimizer.init, out_shardings=NamedSharding(mesh, P()))(p)
    inputs = {"params": p, "opt_state": s, "x": xs, "y": ys}
    step(p, s, xs, ys)
    return {"deleted": [name for name, tree in inputs.items()
                        if any(isinstance(leaf, _Array) and leaf.is_deleted() for leaf in _leaves(tree))]}
