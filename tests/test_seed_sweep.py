"""Verdicts that do not depend on the grading seed (issue 29), and the sweep tool that measures them.

``benchmarks/seed_sweep.py`` grades every mutant and valid variant at many seeds (the full sweep: ~20 seeds,
run by hand); here a cheap version runs inside ``make test``: the files of the clauses that a tolerance
margin used to decide, at two seeds other than the suite's, must fail exactly their ``# FAILS:`` line at
each. ``tests/test_outcomes.py`` covers every file at the suite's seed.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from conftest import SEED

from autograder.core.paths import ROOT


def _tool():
    spec = importlib.util.spec_from_file_location("seed_sweep", ROOT / "benchmarks" / "seed_sweep.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["seed_sweep"] = mod
    spec.loader.exec_module(mod)
    return mod


sweep_tool = _tool()

# Clauses once decided by a margin or only by the reference's own choices: which optimizer fit steps,
# gradients left on the parameters, optimizers that need the params, the class count, the value at zero.
FILES = {
    "ex02_torch_training": ["fit_adamw", "train_step_zero_grad_after_step", "valid_grad_none_after_forward_explicit_adam"],
    "ex05_jit_train_step": ["fit_adamw", "update_without_params"],
    "ex06_per_example_grads": ["clip_normalise_then_rescale"],
    "ex07_flax_cnn": ["loss_one_hot_ten"],
    "ex11_torch_compile": ["clip_ratio_nan_grad", "step_zero_grad_after_step"],
}
SEEDS = [SEED + 1, SEED + 2]


def test_unstable_and_unexpected_are_found():
    """The tool's judgement on made-up verdicts: a verdict that flips with the seed, a header not met."""
    case = sweep_tool.Case(Path("m.py"), "ex99_x", "mutant", frozenset({"a"}))
    verdicts = {case: {1: {"a": False, "b": True}, 2: {"a": False, "b": False}, 3: {"a": True, "b": True}}}
    assert sweep_tool.unstable(verdicts) == [
        {"file": "ex99_x/m", "check": "a", "passed_at": [3], "failed_at": [1, 2]},
        {"file": "ex99_x/m", "check": "b", "passed_at": [1, 3], "failed_at": [2]},
    ]
    assert [(w["seed"], w["failed"]) for w in sweep_tool.unexpected(verdicts)] == [(2, ["a", "b"]), (3, [])]


def test_every_listed_file_exists():
    found = {c.path.stem for c in sweep_tool.cases(FILES, [n for names in FILES.values() for n in names])
             if c.kind != "solution"}
    assert found == {n for names in FILES.values() for n in names}


@pytest.fixture(scope="module")
def verdicts() -> dict:
    """Every listed file of every exercise (and each exercise's solution) at each seed: one grading run per
    seed for all of them, as the full sweep does (the tests below read their exercise's part)."""
    todo = [case for ex in sorted(FILES) for case in sweep_tool.cases([ex], FILES[ex])]
    return sweep_tool.sweep(todo, SEEDS, jobs=2)


@pytest.mark.parametrize("exercise", sorted(FILES))
def test_verdicts_are_the_same_at_other_seeds(verdicts, exercise):
    mine = {case: by_seed for case, by_seed in verdicts.items() if case.exercise == exercise}
    assert {c.path.stem for c in mine if c.kind != "solution"} == set(FILES[exercise])
    assert all(set(by_seed) == set(SEEDS) for by_seed in mine.values())
    assert sweep_tool.unstable(mine) == []
    assert sweep_tool.unexpected(mine) == []
