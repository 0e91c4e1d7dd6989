"""ex08: the reference matches closed forms, and other valid ways to write it get full marks."""

from __future__ import annotations

import importlib.util
import math
import re

import numpy as np
import pytest
from conftest import make_submission

from autograder._paths import SOLUTIONS
from autograder.messages import placeholders

EX = "ex08_jax_transforms"

NTH = """    for _ in range(n):
        f = jax.grad(f)
    return f
"""
COIN = """    branch = jax.random.bernoulli(key)
    return jax.lax.cond(branch,
                        lambda a: jax.nn.relu(a @ w1),
                        lambda a: jax.nn.sigmoid(a @ w2),
                        x)
"""
COUNT = """    return len(jax.make_jaxpr(f)(*args).jaxpr.eqns)
"""
DROP = """    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), jnp.zeros_like(x))
"""

VARIANTS = {
    # recursion; lax.switch (lowers to cond); ClosedJaxpr.eqns; uniform < keep and a weak 0.0
    "recursive_switch_uniform": [
        (NTH, """    return f if n == 0 else jax.grad(nth_derivative(f, n - 1))
"""),
        (COIN, """    index = jax.random.bernoulli(key).astype(jnp.int32)
    return jax.lax.switch(index, [lambda a: jax.nn.sigmoid(a @ w2), lambda a: jax.nn.relu(a @ w1)], x)
"""),
        (COUNT, """    closed = jax.make_jaxpr(f)(*args)
    return sum(1 for _ in closed.eqns)
"""),
        (DROP, """    mask = jax.random.uniform(key, x.shape) < 1.0 - rate
    return jnp.where(mask, x / (1.0 - rate), 0.0)
"""),
    ],
    # cond with a tuple operand and jax.nn.relu via jnp.maximum; multiply by a float mask (gives -0.0)
    "operands_tuple_float_mask": [
        (COIN, """    def on(ops):
        a, u, _ = ops
        return jnp.maximum(a @ u, 0.0)

    def off(ops):
        a, _, v = ops
        return 1.0 / (1.0 + jnp.exp(-(a @ v)))

    return jax.lax.cond(jax.random.bernoulli(key, 0.5), on, off, (x, w1, w2))
"""),
        (DROP, """    keep = jax.random.bernoulli(key, p=1.0 - rate, shape=x.shape)
    return x * keep.astype(x.dtype) / (1.0 - rate)
"""),
    ],
}


def _source(subs: list[tuple[str, str]]) -> str:
    text = (SOLUTIONS / f"{EX}.py").read_text()
    text = "\n".join(line for line in text.splitlines()
                     if not re.match(r"^\s*# (BEGIN|END) SOLUTION\s*$", line)) + "\n"
    for old, new in subs:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_valid_variant_gets_full_marks(run, tmp_path, variant):
    sub = make_submission(tmp_path / "sub", {EX: _source(VARIANTS[variant])}, only=[EX])
    res = run.grade([str(sub)], only=[EX])[0]["exercises"][EX]
    failed = {t["name"]: t["message"] for t in res["tests"] if not t["passed"]}
    assert not failed, failed
    assert res["score"] == res["max_score"]


@pytest.fixture(scope="module")
def ref():
    spec = importlib.util.spec_from_file_location("_ref_ex08", SOLUTIONS / f"{EX}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _closed_form(kind: str, coef: list[float], n: int, x: float) -> float:
    if kind == "poly":
        return sum(c * math.perm(k, n) * x ** (k - n) for k, c in enumerate(coef) if k >= n)
    if kind == "sin":
        a, b = coef
        return a ** n * math.sin(a * x + b + n * math.pi / 2)
    if kind == "exp":
        a, c = coef
        return c * a ** n * math.exp(a * x)
    s, co = math.sin(x), math.cos(x)  # sin(x) x^2
    return [s * x * x,
            co * x * x + 2 * x * s,
            -s * x * x + 4 * x * co + 2 * s,
            -co * x * x - 6 * x * s + 6 * co][n]


def test_reference_nth_derivative_matches_closed_forms(ref):
    from autograder.exercises.ex08_jax_transforms import probes as probes
    from autograder.exercises.ex08_jax_transforms.public import KINDS, function_case, points

    rng = np.random.default_rng(0)
    cases = [function_case(rng, kind, n) for kind in KINDS for n in range(4)]
    xs = points(rng, 4)
    for probe in (probes.probe_nth, probes.probe_nth_jit):
        got = probe(ref, cases, xs)
        for case, row in zip(cases, got):
            want = [_closed_form(case["kind"], case["coef"], case["n"], x) for x in xs]
            np.testing.assert_allclose(row, want, rtol=1e-5, atol=1e-5, err_msg=str(case))


def test_reference_count_ops_is_the_top_level_count(ref):
    from autograder.exercises.ex08_jax_transforms import probes as probes

    x = np.ones(3, np.float32)
    assert probes.probe_count_ops(ref, [["ops_cond", [x]], ["ops_scan", [x]], ["ops_jitted_inner", [x]]]) == [5, 3, 4]


def test_messages_have_the_same_keys_and_placeholders():
    from autograder.exercises.ex08_jax_transforms import messages as msgs

    assert set(msgs.EN) == set(msgs.ES)
    for key in msgs.EN:
        assert key.startswith("EX08_")
        assert placeholders(msgs.EN[key]) == placeholders(msgs.ES[key]), key
