"""A crashed check is judged again with the reference run again, fresh, standing in for the student (issue 53).

``ExerciseGrading.judged`` is the one function every path re-judges through (``GradingRun``, the pytest entry's
``record``, a cluster task's ``grade_exercise``). Its stand-in used to answer ``ctx.student`` from the run's cache,
keyed by probe and arguments: a stateful probe called twice with the same arguments (ex05's ``trace_call`` on
batch ``a``) got its first answer again, the reference "failed" ex05's ``one_trace_per_new_shape`` and a crash
there was ``grader_error`` whoever caused it. Here ex05's real check and probes run in this process on the
solution (a worker's answers without the worker; the end-to-end attack is
tests/adversarial/attacks/overflow_ex05_trace_counter.py); the workers' side is
:class:`autograder.engine.reference.FreshReference`, run by tests/test_grader_trouble.py's stand-in tests.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import importlib.util
import itertools
from typing import Any

import pytest
from conftest import SEED

from autograder.core.paths import SOLUTIONS
from autograder.core.protocol import reference_key
from autograder.core.suite import Check, GraderBug, StudentProblem
from autograder.engine import whose
from autograder.engine.exercise import ExerciseGrading, ExerciseHost
from autograder.engine.outcomes import GradingCancelled

EX = "ex05_jit_train_step"
pytest.importorskip("jax")
pytest.importorskip("optax")
pytestmark = pytest.mark.skipif(importlib.util.find_spec(f"autograder.hidden.{EX}") is None,
                                reason="ex05's hidden suite is not installed")
_loaded = itertools.count()


class InProcessReference:
    """The reference's probes on the solution, in this process, its module loaded anew (a
    :class:`~autograder.engine.whose.StandIn`); ``fail_on``: a probe it cannot answer (the grader's trouble)."""

    def __init__(self, fail_on: str | None = None, cancel: bool = False) -> None:
        self.probes = importlib.import_module(f"autograder.exercises.{EX}.probes")
        spec = importlib.util.spec_from_file_location(f"_fresh_{EX}_{next(_loaded)}", SOLUTIONS / f"{EX}.py")
        assert spec is not None and spec.loader is not None
        self.mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.mod)
        self.fail_on, self.cancel = fail_on, cancel
        self.asked: list[str] = []
        self.closed = False

    def call(self, probe: str, kwargs: dict[str, Any]) -> Any:
        assert not self.closed
        self.asked.append(probe)
        if self.cancel:
            raise GradingCancelled("grading was cancelled")
        if probe == self.fail_on:
            raise GraderBug(f"reference probe {probe} failed: {{'ok': False}}")
        return getattr(self.probes, f"probe_{probe}")(self.mod, **copy.deepcopy(kwargs))

    def close(self) -> None:
        self.closed = True


class Cached:
    """The run's cache as ``ReferenceBank.call`` keeps it: one answer per (exercise, probe, arguments)."""

    def __init__(self) -> None:
        self.reference = InProcessReference()
        self.answers: dict[str, Any] = {}

    def __call__(self, exercise: str, probe: str, kwargs: dict[str, Any]) -> Any:
        key = reference_key(exercise, probe, kwargs)
        if key not in self.answers:
            self.answers[key] = self.reference.call(probe, kwargs)
        return self.answers[key]


def _grading(fresh: list[InProcessReference], **fresh_kwargs: Any) -> ExerciseGrading:
    """ex05's grading with a host that has no workers: the cache answers ``ctx.reference``, each stand-in gets an
    :class:`InProcessReference` of its own (kept in ``fresh``)."""

    def make(exercise: str) -> InProcessReference:
        assert exercise == EX
        fresh.append(InProcessReference(**fresh_kwargs))
        return fresh[-1]

    def no_worker(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the stand-in starts no student's worker")

    host = ExerciseHost(lang="en", public_only=False, seed=SEED, device={"torch": "cpu", "jax": "cpu"}, timeout=60.0,
                        mem_bytes=2**30, tmp="/nonexistent", envelope=None, start_worker=no_worker,  # type: ignore[arg-type]
                        scratch_id=lambda: 0, note_isolation=lambda _iso: None, reference_call=Cached(),
                        fresh_reference=make, library_trouble=lambda _ex: None)
    return ExerciseGrading(host, None, EX)  # type: ignore[arg-type]


def _check(grading: ExerciseGrading, name: str) -> Check:
    return next(c for c in grading.checks if c.name == name)


# what ex05's one_trace_per_new_shape raised on the student's counters: (loss[4] - loss[3]) / loss[0] of a
# count the student's step set to 10**400 (tests/adversarial/attacks/overflow_ex05_trace_counter.py)
OVERFLOW = OverflowError("integer division result too large for a float")


class FromTheCache:
    """A stand-in answered from the run's cache, as it was before issue 53."""

    def __init__(self, cached: Cached) -> None:
        self.cached = cached

    def call(self, probe: str, kwargs: dict[str, Any]) -> Any:
        return self.cached(EX, probe, kwargs)

    def close(self) -> None:
        pass


def test_a_stand_in_from_the_cache_makes_the_reference_fail_the_stateful_trace_check():
    """Why the stand-in may not be the cache: ``trace_call`` on batch ``a`` answers its first count again, the
    reference "fails" and the crash is judged the grader's."""
    grading = _grading([])
    cached = grading.host.reference_call
    grading.host = dataclasses.replace(grading.host, fresh_reference=lambda _ex: FromTheCache(cached))
    verdict = grading.judged(_check(grading, "one_trace_per_new_shape"), OVERFLOW)
    assert isinstance(verdict, GraderBug) and "Fail (EX05_RETRACES_SEEN_SHAPE)" in str(verdict), verdict


def test_a_crash_of_the_trace_check_is_the_students_when_the_fresh_reference_passes():
    fresh: list[InProcessReference] = []
    grading = _grading(fresh)
    verdict = grading.judged(_check(grading, "one_trace_per_new_shape"), OVERFLOW)
    assert isinstance(verdict, StudentProblem) and verdict.key == whose.UNREADABLE, verdict
    assert grading.trouble is None, grading.trouble
    assert "one_trace_per_new_shape: failed with OverflowError" in grading.log[0], grading.log
    (stand_in,) = fresh  # one fresh reference, asked every call in the check's order, then closed
    assert stand_in.asked == ["trace_open", *["trace_call"] * 7] and stand_in.closed


def test_each_judged_check_gets_a_reference_of_its_own():
    fresh: list[InProcessReference] = []
    grading = _grading(fresh)
    for name in ("compiles_once", "one_trace_per_new_shape"):
        verdict = grading.judged(_check(grading, name), OVERFLOW)
        assert isinstance(verdict, StudentProblem) and verdict.key == whose.UNREADABLE, (name, verdict)
    assert len(fresh) == 2 and all(f.closed for f in fresh)
    assert fresh[0].mod is not fresh[1].mod


def test_a_check_the_fresh_reference_fails_too_is_the_graders():
    fresh: list[InProcessReference] = []
    grading = _grading(fresh)

    def divides_by_nothing(ctx: Any) -> None:
        """A broken check: it crashes whatever it gets."""
        ctx.student("trace_open", opt="adam", lr=0.01, **_trace_case())
        _ = 1 / len(ctx.student("trace_open", opt="adam", lr=0.01, **_trace_case()))  # {}: divides by 0

    check = Check(name="divides_by_nothing", fn=divides_by_nothing, points=1.0)
    verdict = grading.judged(check, OVERFLOW)
    assert isinstance(verdict, GraderBug), verdict
    assert "divides_by_nothing: the check fails with the reference standing in for the student: " \
           "ZeroDivisionError" in str(verdict)
    assert grading.trouble and fresh[0].closed and fresh[0].asked == ["trace_open", "trace_open"]


def test_a_probe_the_fresh_reference_cannot_answer_is_the_graders():
    fresh: list[InProcessReference] = []
    grading = _grading(fresh, fail_on="trace_call")
    verdict = grading.judged(_check(grading, "one_trace_per_new_shape"), OVERFLOW)
    assert isinstance(verdict, GraderBug), verdict
    assert "reference probe trace_call failed" in (grading.trouble or ""), grading.trouble
    assert fresh[0].closed


def test_a_run_cancelled_during_the_stand_in_is_never_the_students_and_closes_the_fresh_reference():
    """(The run drops or replaces the row of what it cancelled: ``GradingRun.grade``, ``grade_exercise``.)"""
    fresh: list[InProcessReference] = []
    grading = _grading(fresh, cancel=True)
    verdict = grading.judged(_check(grading, "one_trace_per_new_shape"), OVERFLOW)
    assert not isinstance(verdict, StudentProblem) and fresh[0].closed, verdict


def _trace_case() -> dict[str, Any]:
    import numpy as np

    from autograder.exercises.ex05_jit_train_step.public import small_case

    rng = np.random.default_rng(0)
    case = small_case(rng, n=8)
    return {"params": case["params"], "xa": case["x"], "ya": case["y"], "xb": case["x"][:4], "yb": case["y"][:4]}
