"""Probes for ex08_jax_transforms: nested grad, lax.cond, counting jaxpr equations, dropout.

The functions handed to the student's `nth_derivative` and `count_ops` are
defined here and picked by name from the grader's kwargs.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from autograder.core.i18n import label
from autograder.probing.tools import ProbeFail, get, jax_converter, jax_to_np, sealed, to_float, type_name

# Bound at import, before student code can patch anything.
_jit = jax.jit
# the text the grader reads and the program run, from JAX's own methods taken at import: a student's code
# that patches jax.stages.Lowered afterwards does not choose what the grader reads
_as_text, _compile = jax.stages.Lowered.as_text, jax.stages.Lowered.compile
_vmap = jax.vmap
_asarray = jax_converter()
_float32 = jnp.float32
_prng_key = jax.random.PRNGKey
_split = jax.random.split
_sin, _cos, _exp, _tanh, _sqrt, _sum, _mean = jnp.sin, jnp.cos, jnp.exp, jnp.tanh, jnp.sqrt, jnp.sum, jnp.mean
_relu, _sigmoid = jax.nn.relu, jax.nn.sigmoid
_cond, _scan, _fori_loop = jax.lax.cond, jax.lax.scan, jax.lax.fori_loop
_np_seed = np.random.seed
_np_get_state = np.random.get_state
_np_array_equal = np.array_equal
_np_stack = np.stack


# ------------------------------------------------------------- nth_derivative
def scalar_function(kind: str, coef: list[float]) -> Any:
    """A scalar -> scalar function with known derivatives, built from `coef`."""
    if kind == "poly":  # sum_k coef[k] x^k
        return lambda x: sum(c * x ** k for k, c in enumerate(coef))
    if kind == "sin":  # sin(a x + b)
        a, b = coef
        return lambda x: _sin(a * x + b)
    if kind == "exp":  # c exp(a x)
        a, c = coef
        return lambda x: c * _exp(a * x)
    if kind == "sinx2":  # sin(x) x^2
        return lambda x: _sin(x) * x ** 2
    raise ValueError(kind)


def probe_nth(mod: Any, cases: list[dict[str, Any]], xs: list[float]) -> list[list[float]]:
    """`nth_derivative(f, n)(x)` for each case and point.

    All cases are compiled together (one compile: far cheaper than eager
    nested grads on CPU); a function that does not trace is measured eagerly,
    so values are judged apart from jit-ability (a check of its own).
    """
    fn = get(mod, "nth_derivative")
    derivs = [fn(scalar_function(c["kind"], c["coef"]), int(c["n"])) for c in cases]
    points = _asarray(np.asarray(xs, dtype=np.float32))
    try:
        table = _jit(lambda p: [_vmap(d)(p) for d in derivs])(points)
        return [[float(v) for v in jax_to_np(row, "nth_derivative")] for row in table]
    except Exception:  # noqa: BLE001 - not traceable: measure eagerly
        pass
    out = []
    for case, d in zip(cases, derivs):
        call = f"nth_derivative({case['kind']}, {case['n']})(x)"
        out.append([to_float(d(_float32(x)), call, strict=False) for x in xs])
    return out


def probe_nth_jit(mod: Any, cases: list[dict[str, Any]], xs: list[float]) -> list[list[float]]:
    """`jax.jit(nth_derivative(f, n))(x)` for each case and point."""
    fn = get(mod, "nth_derivative")
    out = []
    for case in cases:
        call = f"jax.jit(nth_derivative({case['kind']}, {case['n']}))(x)"
        d = _jit(fn(scalar_function(case["kind"], case["coef"]), int(case["n"])))
        out.append([to_float(d(_float32(x)), call, strict=False) for x in xs])
    return out


# -------------------------------------------------------------------- coin_net
def _keys(seed: int, n: int) -> jax.Array:
    return _split(_prng_key(seed), n)


def _coin_outputs(f: Any, x: np.ndarray, w1: np.ndarray, w2: np.ndarray, keys: jax.Array, call: str) -> np.ndarray:
    xs, a, b = _asarray(x), _asarray(w1), _asarray(w2)
    return _np_stack([jax_to_np(f(xs, keys[i], a, b), call) for i in range(keys.shape[0])])


def probe_coin_keys(mod: Any, x: np.ndarray, w1: np.ndarray, w2: np.ndarray, seed: int, n_keys: int) -> np.ndarray:
    """Outputs for `n_keys` keys split from `PRNGKey(seed)`, shape (n_keys, N, h).

    Compiled once when the function traces (fast); eagerly otherwise, so the
    branch agreement is measured apart from jit-ability (a check of its own).
    """
    fn = get(mod, "coin_net")
    keys = _keys(seed, n_keys)
    try:
        return _coin_outputs(_jit(fn), x, w1, w2, keys, "coin_net")
    except Exception:  # noqa: BLE001 - not traceable: measure eagerly
        return _coin_outputs(fn, x, w1, w2, keys, "coin_net")


def probe_coin_jit(mod: Any, x: np.ndarray, w1: np.ndarray, w2: np.ndarray, seed: int, n_keys: int) -> np.ndarray:
    """`jax.jit(coin_net)` with the key traced, for `n_keys` keys: (n_keys, N, h)."""
    fn = get(mod, "coin_net")
    return _coin_outputs(_jit(fn), x, w1, w2, _keys(seed, n_keys), "jax.jit(coin_net)")


def probe_coin_program(mod: Any, x: np.ndarray, w1: np.ndarray, w2: np.ndarray, seed: int, n_keys: int,
                       _get: Any = get, _jit: Any = _jit, _as_text: Any = _as_text, _compile: Any = _compile,
                       _str: type = str) -> dict[str, Any]:
    """The program JAX lowers for `jax.jit(coin_net)` with the key traced, as StableHLO text (the grader reads
    it: autograder.probing.artefact), and that same lowering compiled and run on ``n_keys`` keys, (n_keys, N, h).
    What chooses the function lowered and reads its text is held in default arguments (see ex06's
    ``probe_pe_program``)."""
    fn = _get(mod, "coin_net")
    keys = _keys(seed, n_keys)
    lowered = _jit(fn).lower(_asarray(x), keys[0], _asarray(w1), _asarray(w2))
    compiled = _compile(lowered)
    return {"program": _str(_as_text(lowered)),
            "outs": _coin_outputs(compiled, x, w1, w2, keys, "jax.jit(coin_net).lower(...).compile()")}


# ------------------------------------------------------------------- count_ops
_inner = jax.jit(lambda a: _tanh(a) * a + 1.0)


def ops_poly(x: jax.Array) -> jax.Array:
    """No sub-jaxpr; `mul` repeats."""
    return _sin(x) * 2.0 + x * x * 3.0


def ops_dense(x: jax.Array, w: jax.Array) -> jax.Array:
    """Two arguments; `reduce_sum` repeats."""
    h = x @ w
    return _sum(_tanh(h) * h) + _sum(h)


def ops_standardise(x: jax.Array) -> jax.Array:
    """Reductions and broadcasting; `sub` repeats."""
    c = x - _mean(x)
    return c / _sqrt(_mean(c * c) + 1e-5) - 1.0


def ops_cond(x: jax.Array) -> jax.Array:
    """A `cond` with multi-equation branches."""
    y = _cond(_sum(x) > 0, lambda a: _sin(a) * 2.0 + 1.0, lambda a: _cos(a) - 1.0, x)
    return y * 3.0


def ops_scan(x: jax.Array) -> jax.Array:
    """A `scan` whose body has several equations."""
    def body(c: jax.Array, xi: jax.Array) -> tuple[jax.Array, jax.Array]:
        c = c * 0.5 + _tanh(xi) * 2.0
        return c, c * c

    c, ys = _scan(body, _float32(0.0), x)
    return c + _sum(ys)


def ops_jitted_inner(x: jax.Array) -> jax.Array:
    """Two calls of a jitted function (one `jit` equation each)."""
    return _inner(x) + _inner(x * 2.0)


def ops_relu(x: jax.Array) -> jax.Array:
    """relu is a custom_jvp call with a sub-jaxpr."""
    return _relu(x) * 2.0 - _sigmoid(x)


def ops_while(x: jax.Array) -> jax.Array:
    """A `while` (fori_loop with a traced bound)."""
    n = (_sum(x > 0)).astype(jnp.int32)
    return _fori_loop(0, n, lambda i, a: a * 0.5 + 1.0, x) - x


OPS = {f.__name__: f for f in (ops_poly, ops_dense, ops_standardise, ops_cond, ops_scan, ops_jitted_inner,
                               ops_relu, ops_while)}


def probe_count_ops(mod: Any, cases: list[list[Any]]) -> list[int]:
    """`count_ops(f, *args)` for each `[name, args]` case."""
    fn = get(mod, "count_ops")
    out = []
    for name, args in cases:
        v = fn(OPS[name], *[_asarray(a) for a in args])
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ProbeFail("WRONG_TYPE", call=f"count_ops({name}, ...)", got=type_name(v), expected=label("value.python_int"))
        out.append(int(v))
    return out


# --------------------------------------------------------------------- dropout
def _dropout_out(fn: Any, x: jax.Array, rate: float, seed: int) -> np.ndarray:
    return jax_to_np(fn(x, float(rate), _prng_key(seed)), "dropout(x, rate, key)")


def probe_dropout(mod: Any, x: np.ndarray, rate: float, seed: int) -> np.ndarray:
    """`dropout(x, rate, PRNGKey(seed))` as numpy."""
    return _dropout_out(get(mod, "dropout"), _asarray(x), rate, seed)


def probe_dropout_seeds(mod: Any, x: np.ndarray, rate: float, seeds: list[int]) -> list[np.ndarray]:
    """`dropout(x, rate, PRNGKey(s))` for each seed, in order, in one process."""
    fn = get(mod, "dropout")
    xs = _asarray(x)
    return [_dropout_out(fn, xs, rate, s) for s in seeds]


def _np_state_equal(a: Any, b: Any) -> bool:
    return a[0] == b[0] and _np_array_equal(a[1], b[1]) and a[2:] == b[2:]


def probe_dropout_numpy(mod: Any, x: np.ndarray, rate: float, seed: int, np_seeds: list[int]) -> dict[str, bool]:
    """Does `dropout` draw from (or re-seed) numpy's global RNG?

    Returns:
        ``touched``: numpy's global state changed during the call;
        ``same``: same key, numpy re-seeded differently in between -> same output.
    """
    fn = get(mod, "dropout")
    xs = _asarray(x)
    _np_seed(int(np_seeds[0]))
    state = _np_get_state()
    before = (state[0], sealed(state[1]), *state[2:])  # read-only: the student's code can reach the probe's locals
    first = _dropout_out(fn, xs, rate, seed)
    touched = not _np_state_equal(before, _np_get_state())
    _np_seed(int(np_seeds[1]))
    second = _dropout_out(fn, xs, rate, seed)
    return {"touched": bool(touched), "same": bool(_np_array_equal(first, second))}
