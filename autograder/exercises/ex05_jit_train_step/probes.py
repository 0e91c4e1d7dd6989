"""Probes for ex05_jit_train_step: run the student's step with a counting loss and optimizer.

The loss function and the optimizers are built here (never the student's
ex04): the loss counts its own Python calls, which happen only while JAX
traces it, and the optimizer wrapper counts ``update`` calls the same way,
so repeated calls of a compiled step leave both counters unchanged. Each
probe builds a fresh loss closure, so nothing compiled in an earlier probe
can be reused by a later one.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from autograder.core import data as _data
from autograder.core.i18n import label
from autograder.probing.optax_family import init_state, optax_optimizer, run_without_params_check
from autograder.probing.tools import ProbeFail, get, instance_of, jax_converter, sealed, to_float, tree_to_np, type_name

# Bound at import, before student code could patch jax/optax/numpy.
_asarray = jax_converter()
_relu = jax.nn.relu
_jit = jax.jit
_mean = jnp.mean
_maximum = jnp.maximum
_log1p = jnp.log1p
_exp = jnp.exp
_abs = jnp.abs
_leaves = jax.tree_util.tree_leaves
_Tracer = jax.core.Tracer
_Array = jax.Array
_GT = optax.GradientTransformation
_sgd = optax.sgd
_adam = optax.adam
_apply_updates = optax.apply_updates
_np_equal = np.array_equal
_np_array, _np_mean = np.array, np.mean
_float64 = np.float64
_clear_caches = jax.clear_caches


def _to_params(params: dict[str, list[np.ndarray]]) -> dict[str, list[jax.Array]]:
    return {"W": [_asarray(w) for w in params["W"]], "b": [_asarray(b) for b in params["b"]]}


def _forward(params: dict, x: jax.Array) -> jax.Array:
    h = x
    for w, b in zip(params["W"][:-1], params["b"][:-1]):
        h = _relu(h @ w + b)
    return h @ params["W"][-1] + params["b"][-1]


_eval_forward = _jit(_forward)  # one compile per worker, instead of one per eager op


class _TooManyCalls(BaseException):  # noqa: N818 - not an Exception: a student's ``except Exception`` lets it by
    """Raised by the loss once it was called more often than a compiled step could call it."""


def _make_loss(counter: dict[str, int], max_calls: int | None = None, scale: float = 1.0) -> Any:
    """Stable BCE of the MLP's first logit; counts the Python calls (= traces once jitted).

    With ``max_calls``, the call after the last allowed one raises :class:`_TooManyCalls`, so an eager
    or re-jitted loop stops after a few steps instead of compiling every one of hundreds. ``scale``
    multiplies the loss (and so its gradients).
    """

    def loss_fn(params: dict, x: jax.Array, y: jax.Array) -> jax.Array:
        counter["loss"] += 1
        if max_calls is not None and counter["loss"] > max_calls:
            raise _TooManyCalls
        counter["loss_traced"] += int(isinstance(x, _Tracer))
        z = _forward(params, x)[:, 0]
        loss = _mean(_maximum(z, 0.0) - z * y + _log1p(_exp(-_abs(z))))
        return loss * scale if scale != 1.0 else loss

    return loss_fn


def _optimizer(name: str, lr: float, counter: dict[str, int] | None = None) -> optax.GradientTransformation:
    """optax.sgd / sgd with momentum / adam, wrapped to count ``update`` calls."""
    if name == "sgd":
        opt = _sgd(lr)
    elif name == "momentum":
        opt = _sgd(lr, momentum=0.9)
    elif name == "adam":
        opt = _adam(lr)
    else:
        raise ValueError(name)
    if counter is None:
        return opt

    def update(updates: Any, state: Any, params: Any = None, **extra: Any) -> Any:
        counter["update"] += 1
        leaves = _leaves(updates)
        counter["update_traced"] += int(bool(leaves) and isinstance(leaves[0], _Tracer))
        return opt.update(updates, state, params, **extra)

    return _GT(opt.init, update)


def _counter() -> dict[str, int]:
    return {"loss": 0, "loss_traced": 0, "update": 0, "update_traced": 0}


def _unpack(out: Any, call: str) -> tuple[Any, Any, Any]:
    if type(out) not in (tuple, list) or len(out) != 3:
        got = label("value.items", name=type(out).__name__, n=len(out)) if type(out) in (tuple, list) else type_name(out)
        raise ProbeFail("EX05_STEP_RETURNS", call=call, got=got)
    return out[0], out[1], out[2]


def _scalar(loss: Any, call: str) -> float:
    if isinstance(loss, _Array) and loss.shape != ():
        raise ProbeFail("WRONG_TYPE", call=call, got=label("value.array_shape", shape=str(tuple(loss.shape))),
                        expected=label("value.scalar_loss"))
    return to_float(loss, call, strict=False)


def _step_fn(mod: Any, loss_fn: Any, opt: Any) -> Any:
    step = get(mod, "make_train_step")(loss_fn, opt)
    if not callable(step):
        raise ProbeFail("WRONG_TYPE", call="make_train_step(loss_fn, optimizer)", got=type_name(step),
                        expected=label("value.function", code="step(params, opt_state, x, y)"))
    return step


# ----------------------------------------------------------------------------- make_train_step
def probe_steps(mod: Any, params: dict, x: np.ndarray, y: np.ndarray, opt: str, lr: float,
                n_steps: int, loss_scale: float = 1.0) -> dict[str, Any]:
    """``n_steps`` calls of the step, feeding back params and state: losses and final params (``loss_scale``:
    the loss multiplied by it, so its gradients too)."""
    optimizer = _optimizer(opt, lr)
    step = _step_fn(mod, _make_loss(_counter(), scale=loss_scale), optimizer)
    p = _to_params(params)
    s = _jit(optimizer.init)(p)  # one program, not one eager zeros per param shape
    xs, ys = _asarray(x), _asarray(y)
    losses = []
    call = "step(params, opt_state, x, y)"
    for _ in range(n_steps):
        p, s, loss = _unpack(step(p, s, xs, ys), call)
        losses.append(_scalar(loss, call))
    return {"losses": losses, "params": tree_to_np(p, "step(params, opt_state, x, y)[0]")}


def _snapshot(tree: Any) -> Any:
    """Containers and leaves of a pytree, by identity, in tuples (``(key, snapshot)`` pairs for a dict's items): the
    student's code can reach it through the probe's frame, and a list or dict there could be rewritten."""
    if isinstance(tree, dict):
        return (tree, tuple((k, _snapshot(v)) for k, v in tree.items()), True)
    if isinstance(tree, (list, tuple)):
        return (tree, tuple(_snapshot(v) for v in tree), False)
    return (tree, None, False)


def _changed(snap: Any, path: str) -> str | dict[str, Any]:
    """'' when the pytree under ``path`` is intact, else a label of what changed (its keys, a container)."""
    obj, kids, keyed = snap
    if kids is None:
        if isinstance(obj, _Array) and obj.is_deleted():
            raise ProbeFail("EX05_DONATED", what=path)
        return ""
    if keyed:
        if set(obj) != {k for k, _ in kids}:
            return label("ex05.what.keys_changed", code=path)
        for k, v in kids:
            if obj[k] is not v[0]:
                return label("ex05.what.replaced", code=f"{path}[{k!r}]")
            msg = _changed(v, f"{path}[{k!r}]")
            if msg:
                return msg
        return ""
    if len(obj) != len(kids):
        return label("ex05.what.length_changed", code=path)
    for i, v in enumerate(kids):
        if obj[i] is not v[0]:
            return label("ex05.what.replaced", code=f"{path}[{i}]")
        msg = _changed(v, f"{path}[{i}]")
        if msg:
            return msg
    return ""


def probe_no_mutation(mod: Any, params: dict, x: np.ndarray, y: np.ndarray, opt: str, lr: float) -> dict[str, Any]:
    """Calls the step twice on the same (params, opt_state): are the inputs intact, the results equal?"""
    optimizer = _optimizer(opt, lr)
    step = _step_fn(mod, _make_loss(_counter()), optimizer)
    p = _to_params(params)
    s = _jit(optimizer.init)(p)  # one program, not one eager zeros per param shape
    snap_p, snap_s = _snapshot(p), _snapshot(s)
    before = tuple(sealed(a) for a in _leaves(tree_to_np(p, "params")))  # read-only: see _snapshot
    xs, ys = _asarray(x), _asarray(y)
    call = "step(params, opt_state, x, y)"
    p1, _, l1 = _unpack(step(p, s, xs, ys), call)
    changed = _changed(snap_p, "params") or _changed(snap_s, "opt_state")
    if not changed:
        after = tree_to_np(p, "params")
        same = all(_np_equal(u, v) for u, v in zip(before, _leaves(after)))
        changed = "" if same else label("ex05.what.values_changed", code="params")
    if changed:
        return {"changed": changed, "same_twice": False}
    p2, _, l2 = _unpack(step(p, s, xs, ys), call)
    changed = _changed(snap_p, "params") or _changed(snap_s, "opt_state")
    same = _scalar(l1, call) == _scalar(l2, call) and all(
        _np_equal(u, v) for u, v in zip(_leaves(tree_to_np(p1, "params")), _leaves(tree_to_np(p2, "params"))))
    return {"changed": changed, "same_twice": bool(same)}


# ----------------------------------------------------------------------------- fit
def probe_fit(mod: Any, params: dict, steps: int, learning_rate: float, return_params: bool,
              max_loss_calls: int | None = None, cold: bool = False) -> dict[str, Any]:
    """``fit`` on make_moons' training split; losses, validation accuracy, loss traces.

    With ``max_loss_calls``, a fit that calls the loss more often stops there and only
    ``{"loss_calls": ..., "stopped": True}`` is returned (also when fit swallowed the stop).
    ``cold``: JAX's in-memory caches are emptied first (the grader then counts what fit compiles).
    """
    if cold:
        _clear_caches()
    data = _data.load("moons")
    counter = _counter()
    x, y = _asarray(data["x_train"]), _asarray(data["y_train"])
    try:
        out = get(mod, "fit")(_to_params(params), x, y, steps=steps, learning_rate=learning_rate,
                              loss_fn=_make_loss(counter, max_loss_calls))
    except _TooManyCalls:
        return {"loss_calls": counter["loss"], "stopped": True}
    if max_loss_calls is not None and counter["loss"] > max_loss_calls:
        return {"loss_calls": counter["loss"], "stopped": True}
    if type(out) not in (tuple, list) or len(out) != 2:
        raise ProbeFail("EX05_FIT_RETURNS", got=type_name(out))
    final, losses = out
    if type(losses) not in (list, tuple):
        raise ProbeFail("WRONG_TYPE", call="fit(...)[1]", got=type_name(losses),
                        expected=label("value.list_of_floats"))
    vals = []
    for i, v in enumerate(losses):
        if type(v) not in (float, _float64):
            raise ProbeFail("WRONG_TYPE", call=f"fit(...) losses[{i}]", got=type_name(v),
                            expected=label("value.python_float_use", use="float(loss)"))
        vals.append(float(v))
    final_np = tree_to_np(final, "fit(...)[0]")
    try:
        z = _np_array(_eval_forward(_to_params(final_np), _asarray(data["x_val"])))[:, 0]
    except Exception as err:  # noqa: BLE001 - a wrong structure is reported, not raised
        raise ProbeFail("EX05_FIT_PARAMS", error=f"{type(err).__name__}") from None
    # in numpy: JAX would compile a program per eager op (compare, compare, mean) on each side
    acc = float(_np_mean((z >= 0) == (data["y_val"] == 1)))
    res: dict[str, Any] = {"losses": vals, "val_acc": acc, "loss_calls": counter["loss"]}
    if return_params:
        res["params"] = final_np
    return res


# ----------------------------------------------------------------------------- one call per request
# The trace checks call the step once per request, so the grader sees, call by call, which programs the
# worker compiled (autograder.workers.compile_cache: every compile of a student's worker is asked of the grader),
# beside the counters of the loss and the optimizer, which live in the student's process.
_SESSION: dict[str, Any] = {}


def probe_trace_open(mod: Any, params: dict, xa: np.ndarray, ya: np.ndarray, xb: np.ndarray, yb: np.ndarray,
                     opt: str, lr: float) -> dict[str, Any]:
    """Builds the step with counting loss and optimizer, and the batches A and B; calls nothing yet.

    JAX's in-memory caches are emptied first, so what the step compiles does not depend on what
    earlier checks happened to compile (an eager step compiles each of its operations anew).
    """
    _SESSION.clear()
    _clear_caches()
    counter = _counter()
    optimizer = _optimizer(opt, lr, counter)
    step = _step_fn(mod, _make_loss(counter), optimizer)
    p = _to_params(params)
    s = _jit(optimizer.init)(p)
    _SESSION.update(counter=counter, step=step, state=[p, s], calls=0,
                    batches={"a": (_asarray(xa), _asarray(ya)), "b": (_asarray(xb), _asarray(yb))})
    return {}


def probe_trace_call(mod: Any, batch: str) -> dict[str, int]:
    """One call of the step opened by :func:`probe_trace_open` on batch ``"a"`` or ``"b"``, feeding back
    params and state: the counters after it."""
    counter = _SESSION["counter"]
    p, s = _SESSION["state"]
    xs, ys = _SESSION["batches"][batch]
    call = "step(params, opt_state, x, y)"
    first_b = batch == "b" and not _SESSION.get("b_seen")
    try:
        p, s, loss = _unpack(_SESSION["step"](p, s, xs, ys), call)
    except (ProbeFail, NotImplementedError):
        raise
    except Exception as err:  # noqa: BLE001 - failing on a new shape is the fact measured
        if not first_b:
            raise
        text = " ".join(str(err).split())[:160]
        raise ProbeFail("EX05_NEW_SHAPE_FAILS", error=f"{type(err).__name__}: {text}") from None
    _scalar(loss, call)
    _SESSION["state"] = [p, s]
    _SESSION["b_seen"] = _SESSION.get("b_seen") or batch == "b"
    return {k: int(counter[k]) for k in ("loss", "loss_traced", "update", "update_traced")}
# ----------------------------------------------------------------------------- optimizer families
def probe_steps_family(mod: Any, params: dict, x: np.ndarray, y: np.ndarray, optimizer: dict[str, Any],
                       n_steps: int) -> dict[str, Any]:
    """:func:`probe_steps` with an optimizer of ``autograder.probing.families`` (e.g. one that needs the params).

    An ``optimizer.update`` called without ``params`` for such an optimizer raises ``EX05_UPDATE_NO_PARAMS``.
    """
    opt = optax_optimizer(optimizer)
    step = _step_fn(mod, _make_loss(_counter()), opt)
    p = _to_params(params)
    s = init_state(opt, p)
    xs, ys = _asarray(x), _asarray(y)
    losses = []
    call = "step(params, opt_state, x, y)"
    for _ in range(n_steps):
        out = run_without_params_check(step, p, s, xs, ys, key="EX05_UPDATE_NO_PARAMS")
        p, s, loss = _unpack(out, call)
        losses.append(_scalar(loss, call))
    return {"losses": losses, "params": tree_to_np(p, "step(params, opt_state, x, y)[0]")}


def probe_fit_optimizer(mod: Any, params: dict, steps: int, learning_rate: float, probe_params: dict,
                        grads: list[dict]) -> dict[str, Any]:
    """Which optimizer ``fit`` hands to ``make_train_step``, told apart by what it does.

    ``fit`` runs ``steps`` steps with ``make_train_step`` watched (looked up in the module, as ``fit``
    does); the last optimizer it was given then makes ``len(grads)`` updates of ``probe_params`` with the
    given gradients. Large params make any weight decay stand out, a learning rate or betas other than
    Adam's defaults change every update: the updates identify the optimizer and its settings exactly.

    Returns:
        ``{"made": how many optimizers make_train_step was given, "updates": the updates (numpy pytrees)}``.
    """
    make = get(mod, "make_train_step")
    seen: list[Any] = []

    def watched(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs["optimizer"] if "optimizer" in kwargs else args[1] if len(args) > 1 else None)
        return make(*args, **kwargs)

    data = _data.load("moons")
    mod.make_train_step = watched
    try:
        get(mod, "fit")(_to_params(params), _asarray(data["x_train"]), _asarray(data["y_train"]), steps=steps,
                        learning_rate=learning_rate, loss_fn=_make_loss(_counter()))
    finally:
        mod.make_train_step = make
    if not seen:
        raise ProbeFail("EX05_FIT_NO_MAKE_TRAIN_STEP")
    opt = seen[-1]
    if not isinstance(opt, _GT):
        raise ProbeFail("NOT_A", what=label("ex05.what.fit_optimizer"), got=type_name(opt),
                        expected=instance_of("optax.GradientTransformation"))
    p = {k: _asarray(v) for k, v in probe_params.items()}
    state = opt.init(p)
    updates = []
    for g in grads:
        u, state = opt.update({k: _asarray(v) for k, v in g.items()}, state, p)
        p = _apply_updates(p, u)
        updates.append(tree_to_np(u, "optimizer.update(grads, opt_state, params)[0]"))
    return {"made": len(seen), "updates": updates}
