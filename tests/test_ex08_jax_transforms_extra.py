"""ex08: the reference matches closed forms (its valid variants: tests/mutants/ex08_jax_transforms/valid_*.py)."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from autograder.core.i18n import placeholders
from autograder.core.paths import SOLUTIONS

EX = "ex08_jax_transforms"


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
        assert key.startswith(("EX08_", "ex08."))  # a message, or a label (ex08.what.*)
        assert placeholders(msgs.EN[key]) == placeholders(msgs.ES[key]), key
