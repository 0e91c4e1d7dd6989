"""autograder.core.masks: dropout that keeps or zeroes whole rows or columns together is found, independent
dropout never is (the bound its docstring states, drawn here many times)."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.core.masks import whole_lines


@pytest.mark.parametrize("p", [0.15, 0.3, 0.5, 0.8, 0.85])
def test_independent_dropout_is_never_taken_for_a_shared_mask(p):
    rng = np.random.default_rng(2026)
    for _ in range(300):
        active = rng.random((64, 64)) < 0.5  # ReLU features: about half on, ~32 a row and a column
        dropped = rng.random((64, 64)) < p
        assert not whole_lines(active, dropped)


@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
@pytest.mark.parametrize("shape", [(1, 64), (64, 1)])  # one mask for the batch (by unit), one per example
def test_a_mask_broadcast_over_rows_or_columns_is_found(p, shape):
    rng = np.random.default_rng(7)
    for _ in range(50):
        active = rng.random((64, 64)) < 0.5
        dropped = np.broadcast_to(rng.random(shape) < p, (64, 64))
        if (dropped & active).any() and not (dropped | ~active).all():
            assert whole_lines(active, dropped)


def test_no_drop_or_all_dropped_is_left_to_the_rate_check():
    active = np.ones((32, 32), dtype=bool)
    assert not whole_lines(active, np.zeros((32, 32), dtype=bool))
    assert not whole_lines(active, np.ones((32, 32), dtype=bool))


def test_too_few_judged_lines_are_not_judged():
    active = np.zeros((64, 64), dtype=bool)
    active[:5] = True  # five rows of 64, columns of 5: neither way 10 lines of 16
    dropped = np.zeros((64, 64), dtype=bool)
    dropped[:2] = True
    assert not whole_lines(active, dropped)
