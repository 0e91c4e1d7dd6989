"""`drift_start`: where a run of steps that started like the reference's drifts away (issue 56, item 5).

The multi-step checks (ex02, ex05, ex07, ex11, ex13) use it to say "the first update matches, a later one does not:
the state is not carried from one step to the next" instead of a bare mismatch on the later losses.
"""

from __future__ import annotations

import numpy as np

from autograder.core.compare import drift_start
from autograder.core.tolerances import tolerance

TOL = tolerance("steps")
WANT = [0.70, 0.61, 0.55, 0.50]


def test_a_right_run_does_not_drift():
    assert drift_start(list(WANT), WANT, TOL) is None


def test_first_update_right_then_drifting_gives_the_first_wrong_index():
    assert drift_start([0.70, 0.61, 0.58, 0.57], WANT, TOL) == 2
    assert drift_start([0.70, 0.61, 0.55, 0.52], WANT, TOL) == 3


def test_a_wrong_start_or_first_update_is_not_a_drift():
    assert drift_start([0.75, 0.61, 0.55, 0.50], WANT, TOL) is None  # the start differs: another bug
    assert drift_start([0.70, 0.66, 0.60, 0.55], WANT, TOL) is None  # the first update differs (fit never rebinds...)


def test_lengths_and_short_runs_are_left_to_the_comparison():
    assert drift_start([0.70, 0.61, 0.58], WANT, TOL) is None
    assert drift_start([0.70, 0.61], [0.70, 0.66], TOL) is None  # no later value to drift
    assert drift_start("0.7", WANT, TOL) is None


def test_a_series_may_end_with_the_final_params():
    params = {"w": np.ones((2, 3), np.float32)}
    drifted = {"w": np.full((2, 3), 1.5, np.float32)}
    assert drift_start([0.70, 0.61, drifted], [0.70, 0.61, params], TOL) == 2
    assert drift_start([0.70, 0.61, params], [0.70, 0.61, params], TOL) is None


def test_the_matching_mistake_of_a_step_returning_the_old_state_is_that_mistake():
    """The report's "matching mistakes" (failed checks and their keys against the mutants' headers) name the mutant
    of the classic, not the unrelated ones a bare MISMATCH on `fit`'s losses matched."""
    from autograder.reports.mistakes import match_mutants
    from autograder.reports.mutants import catalogue

    failed = {"step_any_optimizer": "EX05_STATE_NOT_CARRIED", "step_optimizers_needing_params": "EX05_STATE_NOT_CARRIED",
              "fit_first_losses": "EX05_FIT_STATE_NOT_CARRIED", "fit_trains_moons": "EX05_FIT_STATE_NOT_CARRIED"}
    found = [m["name"] for m in match_mutants(failed, catalogue()["ex05_jit_train_step"])]
    assert found == ["step_returns_old_opt_state"]
