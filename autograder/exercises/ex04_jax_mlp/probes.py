"""Probes for ex04_jax_mlp: call the student's pure functions, plain and transformed, and measure.

Params travel as ``{"W": [ndarray], "b": [ndarray]}`` and are rebuilt as fresh
jax arrays in fresh lists for every call, so a probe can tell whether the
student's code touched its inputs. Keys are built here from an int seed
(typed keys cannot cross the wire).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from autograder.core.i18n import label
from autograder.probing.tools import ProbeFail, get, jax_converter, jax_to_np, tree_to_np, type_name

# Bound at import, before student code could patch jax/numpy.
_jit = jax.jit
_grad = jax.grad
_vmap = jax.vmap
_relu = jax.nn.relu
_asarray = jax_converter()
_jsum = jnp.sum
_prng_key = jax.random.PRNGKey
_typed_key = jax.random.key
_Array = jax.Array
_Tracer = jax.core.Tracer
_np_array = np.array
_np_equal = np.array_equal
_np_mean = np.mean
_np_sqrt = np.sqrt
_float64 = np.float64
_TRACE_ERRORS = (
    jax.errors.TracerArrayConversionError,
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.UnexpectedTracerError,
)


def _short(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text[:140]}"


def _to_params(params: dict[str, list[np.ndarray]]) -> dict[str, list[jax.Array]]:
    return {"W": [_asarray(w) for w in params["W"]], "b": [_asarray(b) for b in params["b"]]}


def _ref_forward(params: dict, x: jax.Array) -> jax.Array:
    """The reference forward, used to judge bce_loss/accuracy on their own."""
    h = x
    for w, b in zip(params["W"][:-1], params["b"][:-1]):
        h = _relu(h @ w + b)
    return h @ params["W"][-1] + params["b"][-1]


# What bce_loss/accuracy see as mlp_forward: jitted, one compile per params/input shape (3 in all)
# instead of one per eager op and layer (~7 per call, ~40 per exercise with the reference's side).
_ref_forward_jit = _jit(_ref_forward)


class _ForwardSwapped:
    """Temporarily replaces the student's ``mlp_forward`` by the reference one."""

    def __init__(self, mod: Any) -> None:
        self.mod = mod
        self.had = hasattr(mod, "mlp_forward")
        self.old = getattr(mod, "mlp_forward", None)

    def __enter__(self) -> None:
        self.mod.mlp_forward = _ref_forward_jit

    def __exit__(self, *exc: Any) -> None:
        if self.had:
            self.mod.mlp_forward = self.old
        else:
            del self.mod.mlp_forward


def _unchanged(params: dict, snapshot: tuple) -> str | dict[str, Any]:
    """'' when ``params`` still holds exactly the same containers and arrays, else a label of what changed."""
    d, w_list, b_list, w_items, b_items = snapshot
    if type(params) is not dict or set(params) != {"W", "b"}:
        return label("ex04.what.keys_changed")
    for name, lst, items in (("W", w_list, w_items), ("b", b_list, b_items)):
        if params[name] is not lst:
            return label("ex04.what.replaced", code=f'params["{name}"]')
        if len(lst) != len(items):
            return label("ex04.what.length_changed", code=f'params["{name}"]', old=len(items), new=len(lst))
        for i, (a, b) in enumerate(zip(lst, items)):
            if a is not b:
                key = "ex04.what.replaced_by_tracer" if isinstance(a, _Tracer) else "ex04.what.replaced_by_value"
                return label(key, code=f'params["{name}"][{i}]')
    return ""


def _snapshot(params: dict) -> tuple:
    """The containers and arrays of ``params``, by identity, as tuples: the student's code can reach this through the
    probe's frame, and a list there could be rewritten to agree with what it changed."""
    return (params, params["W"], params["b"], tuple(params["W"]), tuple(params["b"]))


# ----------------------------------------------------------------------------- forward
def probe_forward(mod: Any, params: dict, x: np.ndarray) -> np.ndarray:
    """``mlp_forward(params, x)`` called eagerly."""
    out = get(mod, "mlp_forward")(_to_params(params), _asarray(x))
    return jax_to_np(out, "mlp_forward(params, x)")


def probe_forward_transforms(mod: Any, params: dict, x: np.ndarray, w: np.ndarray) -> dict[str, Any]:
    """Eager, ``jax.jit``, ``jax.vmap`` (one example at a time) and ``jax.grad`` of ``sum(w * out)``."""
    f = get(mod, "mlp_forward")
    p = _to_params(params)
    snap = _snapshot(p)
    xs = _asarray(x)
    ws = _asarray(w)
    out: dict[str, Any] = {"eager": jax_to_np(f(p, xs), "mlp_forward(params, x)")}
    changed = _unchanged(p, snap)
    if changed:  # the transforms below would see other params: say why
        raise ProbeFail("EX04_MUTATES", what=changed)

    def run(transform: str, thunk: Any) -> Any:
        try:
            return thunk()
        except _TRACE_ERRORS as err:
            raise ProbeFail("EX04_NOT_TRACEABLE", transform=transform, error=_short(err)) from None

    out["jit"] = jax_to_np(run("jax.jit(mlp_forward)", lambda: _jit(f)(p, xs)), "jax.jit(mlp_forward)")
    # vmap and grad run jitted: one compile instead of one per eager op (and no less strict).
    out["vmap"] = jax_to_np(
        run("jax.vmap(lambda xi: mlp_forward(params, xi[None])[0])",
            lambda: _jit(_vmap(lambda xi: f(p, xi[None, :])[0]))(xs)),
        "jax.vmap(mlp_forward)")
    grads = run("jax.grad(lambda p: sum(w * mlp_forward(p, x)))",
                lambda: _jit(_grad(lambda q: _jsum(f(q, xs) * ws)))(p))
    out["grad"] = tree_to_np(grads, "jax.grad(...)(params)")
    return out


def probe_forward_purity(mod: Any, params1: dict, x1: np.ndarray, params2: dict, x2: np.ndarray,
                         init_dims: list[int], seed: int) -> dict[str, Any]:
    """Calls forward on params1, runs init_params on other dims, forward on params2 (another depth),
    forward on params1 again, then jitted; reports the outputs and whether inputs were touched."""
    f = get(mod, "mlp_forward")
    p1, p2 = _to_params(params1), _to_params(params2)
    s1, s2 = _snapshot(p1), _snapshot(p2)
    xa, xb = _asarray(x1), _asarray(x2)
    out: dict[str, Any] = {"changed": ""}

    def touched() -> bool:  # a changed input is reported before anything it breaks later
        out["changed"] = _unchanged(p1, s1) or _unchanged(p2, s2)
        return bool(out["changed"])

    out["first"] = jax_to_np(f(p1, xa), "mlp_forward(params1, x1)")
    if touched():
        return out
    init = getattr(mod, "init_params", None)
    if init is not None:
        try:  # code that stores layer sizes in globals is caught by the next calls
            init(list(init_dims), _prng_key(seed))
        except Exception:  # noqa: BLE001 - init_params is judged elsewhere
            pass
    out["second"] = jax_to_np(f(p2, xb), "mlp_forward(params2, x2)")
    if touched():
        return out
    out["again"] = jax_to_np(f(p1, xa), label("ex04.call.second"))
    if touched():
        return out
    try:
        out["jit"] = jax_to_np(_jit(f)(p1, xa), "jax.jit(mlp_forward)(params1, x1)")
    except _TRACE_ERRORS as err:
        raise ProbeFail("EX04_NOT_TRACEABLE", transform="jax.jit(mlp_forward)", error=_short(err)) from None
    touched()
    return out


# ----------------------------------------------------------------------------- loss, accuracy
def probe_bce(mod: Any, params: dict, x: np.ndarray, y: np.ndarray, with_grad: bool) -> dict[str, Any]:
    """``bce_loss`` (and its gradient) with the reference ``mlp_forward`` swapped in."""
    f = get(mod, "bce_loss")
    p = _to_params(params)
    xs, ys = _asarray(x), _asarray(y)
    with _ForwardSwapped(mod):
        out: dict[str, Any] = {"loss": jax_to_np(f(p, xs, ys), "bce_loss(params, x, y)")}
        if with_grad:
            try:
                g = _jit(_grad(f))(p, xs, ys)
            except _TRACE_ERRORS as err:
                raise ProbeFail("EX04_NOT_TRACEABLE", transform="jax.grad(bce_loss)", error=_short(err)) from None
            out["grad"] = tree_to_np(g, "jax.grad(bce_loss)(params, x, y)")
    return out


def probe_accuracy(mod: Any, params: dict, x: np.ndarray, y: np.ndarray) -> float:
    """``accuracy`` with the reference ``mlp_forward`` swapped in; must be a Python float."""
    f = get(mod, "accuracy")
    with _ForwardSwapped(mod):
        got = f(_to_params(params), _asarray(x), _asarray(y))
    if type(got) in (float, _float64):
        return float(got)
    raise ProbeFail("WRONG_TYPE", call="accuracy(params, x, y)", got=type_name(got),
                    expected=label("value.python_float_use", use="float(...)"))


# ----------------------------------------------------------------------------- init_params
def _key(seed: int, kind: str) -> jax.Array:
    return _typed_key(seed) if kind == "typed" else _prng_key(seed)


def _init(mod: Any, dims: list[int], seed: int, kind: str, call: str) -> dict[str, list[np.ndarray]]:
    """Runs init_params and checks the pytree's structure; returns numpy leaves."""
    out = get(mod, "init_params")(list(dims), _key(seed, kind))
    if type(out) is not dict or set(out) != {"W", "b"}:
        got = label("value.keys", keys=str(sorted(map(str, out)))) if isinstance(out, dict) else type_name(out)
        raise ProbeFail("EX04_INIT_STRUCTURE", call=call, got=got)
    res = {}
    for name in ("W", "b"):
        seq = out[name]
        if type(seq) not in (list, tuple) or len(seq) != len(dims) - 1:
            got = label("value.arrays", n=len(seq)) if type(seq) in (list, tuple) else type_name(seq)
            raise ProbeFail("EX04_INIT_LAYERS", call=call, name=name, got=got, n=len(dims) - 1)
        res[name] = [jax_to_np(a, f'{call}["{name}"][{i}]') for i, a in enumerate(seq)]
    return res


def probe_init_structure(mod: Any, layer_dims: list[int], seed: int, key_kind: str) -> dict[str, Any]:
    """Shapes, dtypes and whether biases are zero (facts any correct init reproduces)."""
    p = _init(mod, layer_dims, seed, key_kind, "init_params(layer_dims, key)")
    return {
        "W_shapes": [list(a.shape) for a in p["W"]],
        "b_shapes": [list(a.shape) for a in p["b"]],
        "dtypes": [str(a.dtype) for a in p["W"] + p["b"]],
        "b_zero": [bool((a == 0).all()) for a in p["b"]],
    }


def probe_init_stats(mod: Any, layer_dims: list[int], seed: int) -> list[dict[str, Any]]:
    """Per weight matrix: size, sample mean, root mean square and kurtosis (float64)."""
    p = _init(mod, layer_dims, seed, "raw", "init_params(layer_dims, key)")
    stats = []
    for w in p["W"]:
        v = _np_array(w, dtype=np.float64).ravel()
        mean = float(_np_mean(v)) if v.size else 0.0
        c = v - mean
        m2 = float(_np_mean(c * c)) if v.size else 0.0
        m4 = float(_np_mean(c**4)) if v.size else 0.0
        stats.append({
            "n": int(v.size), "shape": list(w.shape), "mean": mean,
            "rms": float(_np_sqrt(_np_mean(v * v))) if v.size else 0.0,
            "kurtosis": m4 / (m2 * m2) if m2 > 0 else 0.0,
            "finite": bool(np.isfinite(v).all()),
        })
    return stats


def probe_init_keys(mod: Any, layer_dims: list[int], seed: int, other_seed: int) -> dict[str, Any]:
    """Facts about keys: same key twice, another key, equal-shape layers, typed keys."""
    call = "init_params(layer_dims, jax.random.PRNGKey(s))"
    a = _init(mod, layer_dims, seed, "raw", call)
    a2 = _init(mod, layer_dims, seed, "raw", call)
    b = _init(mod, layer_dims, other_seed, "raw", call)
    same = all(_np_equal(u, v) for u, v in zip(a["W"] + a["b"], a2["W"] + a2["b"]))
    equal_across = sum(bool(_np_equal(u, v)) for u, v in zip(a["W"], b["W"]))
    shared = [[i, j] for i in range(len(a["W"])) for j in range(i + 1, len(a["W"]))
              if a["W"][i].shape == a["W"][j].shape and _np_equal(a["W"][i], a["W"][j])]
    tcall = "init_params(layer_dims, jax.random.key(s))"
    try:
        t = _init(mod, layer_dims, seed, "typed", tcall)
        t2 = _init(mod, layer_dims, seed, "typed", tcall)
    except ProbeFail:
        raise
    except NotImplementedError:
        raise
    except Exception as err:  # noqa: BLE001 - a typed-key failure is the fact measured here
        raise ProbeFail("EX04_TYPED_KEY", error=_short(err)) from None
    typed_shapes = [list(u.shape) for u in t["W"] + t["b"]] == [list(u.shape) for u in a["W"] + a["b"]]
    typed_same = all(_np_equal(u, v) for u, v in zip(t["W"] + t["b"], t2["W"] + t2["b"]))
    return {"same_key_same": bool(same), "layers_equal_across_keys": int(equal_across),
            "shared_layers": shared, "typed_shapes_ok": bool(typed_shapes), "typed_same": bool(typed_same)}
