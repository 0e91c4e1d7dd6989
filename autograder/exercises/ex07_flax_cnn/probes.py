"""Probes for ex07_flax_cnn: build the student's Flax CNN, load given params, train, count traces."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

from autograder.core.i18n import label
from autograder.probing.optax_family import init_state, optax_optimizer, run_without_params_check
from autograder.probing.tools import (
    FAST_RUN,
    ProbeFail,
    get,
    instance_of,
    jax_converter,
    jax_to_np,
    qualified_type,
    type_name,
)

# Bound at import, before the student's module can patch anything.
_asarray = jax_converter()
_jit = jax.jit
_eval_shape = jax.eval_shape
_tree_map = jax.tree.map
_key = jax.random.key
_ShapeDtypeStruct = jax.ShapeDtypeStruct
_Tracer = jax.core.Tracer
_Array = jax.Array
_Module = nn.Module
_intercept = nn.intercept_methods
_xent = optax.softmax_cross_entropy_with_integer_labels
_GradientTransformation = optax.GradientTransformation
_OPTIMIZERS = {"sgd": optax.sgd, "adam": optax.adam}
_np_array = np.array
_clear_caches = jax.clear_caches


# ---------------------------------------------------------------- helpers
def _build(mod: Any, num_classes: int | None) -> nn.Module:
    cls = get(mod, "FlaxCNN")
    call = "FlaxCNN()" if num_classes is None else f"FlaxCNN(num_classes={num_classes})"
    model = cls() if num_classes is None else cls(num_classes=num_classes)
    if not isinstance(model, _Module):
        raise ProbeFail("WRONG_TYPE", call=call, got=type_name(model), expected=instance_of("flax.linen.Module"))
    return model


def _shape_tree(tree: Any, call: str) -> Any:
    """A tree of ShapeDtypeStructs (dicts or FrozenDicts) as nested dicts of shape lists."""
    if isinstance(tree, Mapping):
        out = {}
        for k, v in tree.items():
            if not isinstance(k, str):
                raise ProbeFail("WRONG_TYPE", call=call, got=label("value.dict_key", name=qualified_type(k)), expected=label("value.str_keys"))
            out[k] = _shape_tree(v, call)
        return out
    if isinstance(tree, _ShapeDtypeStruct):
        return [int(s) for s in tree.shape]
    raise ProbeFail("WRONG_TYPE", call=call, got=type_name(tree), expected=label("value.dict_of_arrays"))


def _abstract_init(model: nn.Module, n: int) -> tuple[Any, Any]:
    """``(output, variables)`` of ``model.init_with_output`` on ``(n, 8, 8, 1)``, shapes only.

    If the model fails on channels-last input but runs on channels-first
    ``(n, 1, 8, 8)``, that is the lesson of this exercise: say so.
    """
    key = _key(0)

    def init(x: jax.ShapeDtypeStruct) -> Any:
        return _eval_shape(lambda k, a: model.init_with_output(k, a), key, x)

    try:
        return init(_ShapeDtypeStruct((n, 8, 8, 1), jnp.float32))
    except NotImplementedError:
        raise
    except Exception as err:  # noqa: BLE001 - student code; re-raised below unless NCHW works
        try:
            init(_ShapeDtypeStruct((n, 1, 8, 8), jnp.float32))
        except Exception:  # noqa: BLE001
            raise err from None
        text = " ".join(f"{type(err).__name__}: {err}".split())[:160]
        raise ProbeFail("EX07_WANTS_NCHW", error=text) from None


def describe_shapes(tree: Any, prefix: str = "") -> str:
    """``Conv_0/kernel (3, 3, 1, 16), ...`` for a nested dict of shape lists."""
    if isinstance(tree, dict):
        parts = [describe_shapes(v, f"{prefix}{k}/") for k, v in tree.items()]
        return ", ".join(p for p in parts if p) or f"{prefix.rstrip('/') or 'params'} {{}}"
    return f"{prefix.rstrip('/')} {tuple(tree)}"


def _shapes_of(tree: Any) -> Any:
    if isinstance(tree, dict):
        return {k: _shapes_of(v) for k, v in tree.items()}
    return [int(s) for s in tree.shape]


def _with_params(mod: Any, num_classes: int | None, params: dict, n: int, call: str) -> tuple[nn.Module, Any]:
    """The student's model and the grader's params as JAX arrays, after checking the tree fits."""
    model = _build(mod, num_classes)
    _out, variables = _abstract_init(model, n)
    mine = _shape_tree(variables, call)
    if mine != _shapes_of(params):
        raise ProbeFail("EX07_PARAMS_DIFFER", call=call, got=describe_shapes(mine))
    return model, _tree_map(_asarray, params)


def _plain(tree: Any, call: str) -> Any:
    """A params tree (dicts or FrozenDicts of jax arrays) as nested dicts of numpy arrays."""
    if isinstance(tree, Mapping):
        out = {}
        for k, v in tree.items():
            if not isinstance(k, str):
                raise ProbeFail("WRONG_TYPE", call=call, got=label("value.dict_key", name=qualified_type(k)), expected=label("value.str_keys"))
            out[k] = _plain(v, call)
        return out
    return jax_to_np(tree, call)


def _loss_float(loss: Any) -> float:
    """The loss a step returned, as a float: a scalar jax.Array (or a Python float)."""
    if type(loss) is float:
        return loss
    if isinstance(loss, _Array) and loss.shape == ():
        return float(_np_array(loss))
    got = label("value.loss_shape", shape=str(tuple(loss.shape))) if isinstance(loss, _Array) else type_name(loss)
    raise ProbeFail("WRONG_TYPE", call="step(params, opt_state, x, y)", got=got,
                    expected=label("ex07.value.third_loss"))


def _call_step(step: Any, variables: Any, opt_state: Any, x: jax.Array, y: jax.Array) -> tuple[Any, Any, Any]:
    res = step(variables, opt_state, x, y)
    if not isinstance(res, tuple) or len(res) != 3:
        raise ProbeFail("WRONG_TYPE", call="step(params, opt_state, x, y)", got=type_name(res),
                        expected=label("value.tuple", code="(params, opt_state, loss)"))
    return res


def _optimizer(spec: dict[str, Any]) -> optax.GradientTransformation:
    kwargs = {k: v for k, v in spec.items() if k != "name"}
    return _OPTIMIZERS[spec["name"]](**kwargs)


# ---------------------------------------------------------------- probes
def probe_param_shapes(mod: Any, num_classes: int | None, n: int) -> dict[str, Any]:
    """Shapes of ``model.init``'s variables and of the output, via ``jax.eval_shape`` (no compile)."""
    call = "FlaxCNN().init" if num_classes is None else f"FlaxCNN(num_classes={num_classes}).init"
    out, variables = _abstract_init(_build(mod, num_classes), n)
    if not isinstance(out, _ShapeDtypeStruct):
        raise ProbeFail("WRONG_TYPE", call=call.replace(".init", "(x)"), got=type_name(out), expected=instance_of("jax.Array"))
    return {"variables": _shape_tree(variables, call), "out": [int(s) for s in out.shape]}


def probe_forward(mod: Any, num_classes: int | None, params: dict, x: np.ndarray) -> np.ndarray:
    """``jax.jit(model.apply)(params, x)`` with the grader's params."""
    call = "FlaxCNN().apply" if num_classes is None else f"FlaxCNN(num_classes={num_classes}).apply"
    model, variables = _with_params(mod, num_classes, params, x.shape[0], call)
    return jax_to_np(_jit(model.apply)(variables, _asarray(x)), call)


class _MaxPoolCNN(nn.Module):
    """The contract's CNN with max_pool: what a student who kept PyTorch's MaxPool2d builds."""

    num_classes: int = 10

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        x = nn.max_pool(nn.relu(nn.Conv(16, (3, 3), padding="SAME")(x)), (2, 2), strides=(2, 2))
        x = nn.max_pool(nn.relu(nn.Conv(32, (3, 3), padding="SAME")(x)), (2, 2), strides=(2, 2))
        x = nn.relu(nn.Dense(64)(x.reshape((x.shape[0], -1))))
        return nn.Dense(self.num_classes)(x)


def probe_max_pool_forward(mod: Any, num_classes: int, params: dict, x: np.ndarray) -> np.ndarray:
    """Logits of the max-pool variant (probe code, never the student's): a diagnosis aid."""
    del mod
    model = _MaxPoolCNN(num_classes=num_classes)
    return _np_array(_jit(model.apply)(_tree_map(_asarray, params), _asarray(x)))


def probe_to_nhwc(mod: Any, x: np.ndarray, as_jax: bool) -> np.ndarray:
    """``to_nhwc(x)`` on a numpy or JAX input; the result must be a jax.Array."""
    fn = get(mod, "to_nhwc")
    kind = "jnp" if as_jax else "np"  # the input, as code: to_nhwc(jnp.asarray(x)) with x of that shape
    out = fn(_asarray(x) if as_jax else _np_array(x, copy=True))
    return jax_to_np(out, f"to_nhwc({kind}.zeros({tuple(x.shape)}))")


def _loss_at(model: nn.Module) -> Any:
    def loss(variables: Any, x: jax.Array, y: jax.Array) -> jax.Array:
        return _xent(model.apply(variables, x), y).mean()

    return _jit(loss)


def probe_train(mod: Any, num_classes: int, params: dict, xs: list[np.ndarray], ys: list[np.ndarray],
                opt: dict[str, Any], after: bool = True) -> dict[str, Any]:
    """Runs ``len(xs)`` steps of the student's step with an optax optimizer.

    Returns the losses the step reported, the final params, and (probe code, when ``after``)
    the loss at the params after each step: a diagnosis aid for a step that reports the loss
    after the update. Only the reference's is ever read, and only once the losses differ, so
    the calls that compare both sides skip it (one compile of the loss fewer per call).
    """
    call = "make_flax_train_step(model, optimizer)"
    model, variables = _with_params(mod, num_classes, params, xs[0].shape[0], call)
    optimizer = _optimizer(opt)
    step = get(mod, "make_flax_train_step")(model, optimizer)
    opt_state = _jit(optimizer.init)(variables)  # one program, not one zeros per param shape
    loss_at = _loss_at(model) if after else None
    losses, losses_after = [], []
    for x, y in zip(xs, ys, strict=True):
        xj, yj = _asarray(x), _asarray(y)
        variables, opt_state, loss = _call_step(step, variables, opt_state, xj, yj)
        losses.append(_loss_float(loss))
        params_np = _plain(variables, "step(params, opt_state, x, y)[0]")
        if loss_at is not None:
            losses_after.append(float(_np_array(loss_at(_tree_map(_asarray, params_np), xj, yj))))
    return {"losses": losses, "params": params_np, "loss_after_update": losses_after}


def probe_fit_digits(mod: Any, params: dict, steps: int, learning_rate: float,
                     n_train: int | None = None) -> dict[str, Any]:
    """Full-batch ``optax.adam`` training on the first ``n_train`` digits (all when None) with the
    student's step; accuracy on the whole validation split."""
    from autograder.core import data as _data

    d = _data.load("digits")
    x_train, y_train = _asarray(d["x_train"][:n_train, ..., None]), _asarray(d["y_train"][:n_train])
    x_val, y_val = _asarray(d["x_val"][..., None]), d["y_val"]
    call = "make_flax_train_step(model, optax.adam(...))"
    model, variables = _with_params(mod, 10, params, 1, call)
    optimizer = optax.adam(learning_rate)
    step = get(mod, "make_flax_train_step")(model, optimizer)
    opt_state = _jit(optimizer.init)(variables)  # one program, not one zeros per param shape
    # Judged by outcome only (compiling is another check's business): wrap the
    # step in jit so an eager step is not slow here; nested jit costs nothing.
    # A step that cannot be traced runs as written.
    fast = _jit(step, compiler_options=FAST_RUN)
    try:
        variables, opt_state, loss = _call_step(fast, variables, opt_state, x_train, y_train)
    except Exception:  # noqa: BLE001 - student code; retried unwrapped
        fast = step
        variables, opt_state, loss = _call_step(fast, variables, opt_state, x_train, y_train)
    losses = [loss]
    for _ in range(steps - 1):
        variables, opt_state, loss = _call_step(fast, variables, opt_state, x_train, y_train)
        losses.append(loss)
    losses_f = [_loss_float(v) for v in losses]
    params_np = _plain(variables, "step(params, opt_state, x, y)[0]")
    logits = _np_array(_jit(model.apply)(_tree_map(_asarray, params_np), x_val))
    acc = float((logits.argmax(axis=1) == y_val).mean()) if np.isfinite(logits).all() else 0.0
    return {"val_acc": acc, "first_loss": losses_f[0], "last_loss": losses_f[-1]}


# ----------------------------------------------------------------------------- one call per request
# The trace check calls the step once per request, so the grader sees, call by call, which programs the
# worker compiled (autograder.probing.observe), beside the counters of the model's __call__ and optimizer.update,
# which live in the student's process.
_SESSION: dict[str, Any] = {}


def probe_trace_open(mod: Any, num_classes: int | None, params: dict, n: int) -> dict[str, Any]:
    """Builds the student's step with a counted model and optimizer; calls nothing yet.

    The model is a subclass of the student's that changes nothing, so only the model passed in is
    counted (not a FlaxCNN the step might build for itself): Python code inside a jitted function runs
    only while JAX traces it, so a step compiled once runs the model's ``__call__`` once per new input
    shape. JAX's in-memory caches are emptied first, so what the step compiles does not depend on
    earlier checks.
    """
    _SESSION.clear()
    _clear_caches()
    call = "make_flax_train_step(model, optimizer)"
    base, variables = _with_params(mod, num_classes, params, n, call)
    try:
        cls = type(type(base).__name__, (type(base),), {"__module__": type(base).__module__})
        model = cls() if num_classes is None else cls(num_classes=num_classes)
    except Exception:  # noqa: BLE001 - an unusual class: count the class itself
        cls, model = type(base), base
    inner = optax.sgd(0.01)
    counts = {"model": 0, "update": 0}
    traced: list[bool] = []

    def update(updates: Any, state: Any, params: Any = None, **extra: Any) -> Any:
        counts["update"] += 1
        return inner.update(updates, state, params, **extra)

    optimizer = _GradientTransformation(inner.init, update)

    def interceptor(next_fun: Any, args: Any, kwargs: Any, context: Any) -> Any:
        if context.method_name == "__call__" and type(context.module) is cls:
            counts["model"] += 1
            traced.append(bool(args) and isinstance(args[0], _Tracer))
        return next_fun(*args, **kwargs)

    step = get(mod, "make_flax_train_step")(model, optimizer)
    opt_state = _jit(optimizer.init)(variables)
    _SESSION.update(step=step, state=[variables, opt_state], counts=counts, traced=traced, interceptor=interceptor)
    return {}


def probe_trace_call(mod: Any, x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """One call of the step opened by :func:`probe_trace_open`: the counters after it."""
    variables, opt_state = _SESSION["state"]
    with _intercept(_SESSION["interceptor"]):
        variables, opt_state, _loss = _call_step(_SESSION["step"], variables, opt_state, _asarray(x), _asarray(y))
    _SESSION["state"] = [variables, opt_state]
    counts = _SESSION["counts"]
    return {"model": int(counts["model"]), "update": int(counts["update"]), "traced": bool(any(_SESSION["traced"]))}
# ---------------------------------------------------------------- any model, any optimizer
class _ProbeMLP(nn.Module):
    """A classifier that is not FlaxCNN (flat inputs, any class count): the step must train any model."""

    hidden: int
    num_classes: int

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        h = jnp.tanh(nn.Dense(self.hidden)(x))  # Dense_0 (compact names follow construction order)
        return nn.Dense(self.num_classes)(h)


def probe_train_any(mod: Any, hidden: int, num_classes: int, params: dict, xs: list[np.ndarray],
                    ys: list[np.ndarray], optimizer: dict[str, Any]) -> dict[str, Any]:
    """``len(xs)`` steps of the student's step for the probe's own MLP (``(N, d)`` inputs, ``num_classes``
    logits) with an optimizer of ``autograder.probing.families``.

    An ``optimizer.update`` called without ``params`` for an optimizer that needs them raises
    ``EX07_UPDATE_NO_PARAMS``.

    Returns:
        ``{"losses": the losses the step reported, "params": the final params}``.
    """
    model = _ProbeMLP(hidden=hidden, num_classes=num_classes)
    variables = _tree_map(_asarray, params)
    opt = optax_optimizer(optimizer)
    step = get(mod, "make_flax_train_step")(model, opt)
    opt_state = init_state(opt, variables)
    losses = []
    for x, y in zip(xs, ys, strict=True):
        variables, opt_state, loss = run_without_params_check(_call_step, step, variables, opt_state, _asarray(x),
                                                              _asarray(y), key="EX07_UPDATE_NO_PARAMS")
        losses.append(_loss_float(loss))
    return {"losses": losses, "params": _plain(variables, "step(params, opt_state, x, y)[0]")}
