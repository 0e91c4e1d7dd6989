"""A dropout whose mask is `uniform(key) > rate` (a common idiom, right at every rate) may drop a draw of exactly
0.0 at rate 0 (probability 2**-23 per element): dropout_values must not fail it for that (found by writing valid
variants: about 1 run in 80 failed it), while a dropout that really drops at rate 0 still fails."""

from __future__ import annotations

import types

import jax
import jax.numpy as jnp
import numpy as np

from autograder.core.suite import Ctx, run_check
from autograder.exercises.ex08_jax_transforms import probes
from autograder.hidden.ex08_jax_transforms import suite

# A check seed whose rate-0 call draws a key for which uniform(key, (200, 500)) holds an exact 0.0 (searched).
SEED = 259


def _uniform_greater(x, rate, key):
    keep = jax.random.uniform(key, x.shape) > rate
    return jnp.where(keep, x / (1 - rate), 0)


def _drops_one_in_a_thousand(x, rate, key):
    keep = jax.random.uniform(key, x.shape) >= max(rate, 1e-3)
    return jnp.where(keep, x / (1 - rate), 0)


def _run(dropout) -> dict:
    mod = types.ModuleType("student")
    mod.dropout = dropout
    check = next(c for c in suite.checks if c.name == "dropout_values")
    ctx = Ctx(rng=np.random.default_rng(SEED), seed=SEED, device={"torch": "cpu", "jax": "cpu"},
              student=lambda probe, call, scale, kw: getattr(probes, f"probe_{probe}")(mod, **kw),
              reference=lambda probe, kw: None)
    return run_check(check, ctx, lang="en")


def test_uniform_greater_than_rate_passes():
    res = _run(_uniform_greater)
    assert res["passed"], res["message"]


def test_the_seed_draws_an_exact_zero():
    # the rate-0 call at this seed really drops an element (else the test above proves nothing)
    seen = []

    def spy(x, rate, key):
        out = _uniform_greater(x, rate, key)
        seen.append((rate, int(jnp.sum(out != x))))
        return out

    _run(spy)
    assert seen[-1][0] == 0.0 and 1 <= seen[-1][1] <= 3


def test_real_drops_at_rate_zero_fail():
    res = _run(_drops_one_in_a_thousand)
    assert not res["passed"] and res["code"] == "EX08_DROPOUT_IDENTITY"
