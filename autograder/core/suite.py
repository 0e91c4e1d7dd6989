"""Hidden-suite building blocks: a registry of checks and the context they get.

A hidden suite (``autograder/hidden/<exercise>.py``) is a :class:`Suite` with
checks. A check draws inputs from ``ctx.rng`` (seeded per grading run),
asks the student's worker and the reference worker to run the same probe,
and judges the plain data that comes back with :meth:`Ctx.assert_close` or
by raising :class:`Fail`. Checks never import student code.

Every way a check can fail the student is a :class:`CheckFailure` (a catalogued
message ``key`` and its ``fields``): :class:`Fail` (the verdict), :class:`StudentProblem`
(the student's code gave no answer), ``probes._common.ProbeFail`` (a probe's finding,
inside the worker) and ``public_snapshot.SnapshotMissing`` (the notebook's stale snapshot).
:class:`GraderBug` stands apart: never the student's fault, so only the grader's own process raises
one (the reference failed, a worker's death it judged its own), never on a student's worker's word. :func:`run_check` is the
one place where a check's outcome becomes a test result (the grader, the notebook's
self-check and the pytest plugin all use it).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autograder.core.compare import drift_start, first_difference
from autograder.core.text import clean
from autograder.core.tolerances import tolerance


class CheckFailure(Exception):
    """A failure that is the student's to fix: ``key`` names a catalogued message, ``fields`` fill it.

    Args:
        key: a message key (``autograder/messages``), e.g. ``"MISMATCH"``.
        **fields: the message's placeholders.
    """

    def __init__(self, key: str, **fields: Any) -> None:
        super().__init__(key)
        self.key = key
        self.fields = fields

    def message(self, lang: str) -> str:
        """The student-facing message in ``lang``: its fields cleaned first (they may quote the student's
        code, names or values: :func:`autograder.core.text.clean`)."""
        from autograder.core.i18n import render
        from autograder.core.text import RECORD_CHARS, clean, clean_tree

        return clean(render(self.key, lang, **clean_tree(self.fields)), RECORD_CHARS)


class Fail(CheckFailure):
    """A check's verdict: the answer is wrong (raised by checks, e.g. through :meth:`Ctx.assert_close`)."""


class StudentProblem(CheckFailure):
    """The student's code could not produce an answer (exception, timeout, crash, a probe's finding...)."""


class GraderBug(Exception):
    """The grader's own trouble, established in its own process (the reference failed, a check crashed with
    the reference standing in for the student): never the student's fault, never raised on a worker's word."""


@dataclass
class Check:
    """One hidden (or public) test of an exercise."""

    name: str
    points: float
    fn: Callable[[Ctx], None]
    hidden: bool = True
    timeout_scale: float = 1.0
    needs: str | None = None
    doc: str = ""


@dataclass
class Suite:
    """The checks of one exercise, in order."""

    exercise: str
    checks: list[Check] = field(default_factory=list)

    def check(self, points: float, *, hidden: bool = True, timeout_scale: float = 1.0,
              needs: str | None = None) -> Callable[[Callable[[Ctx], None]], Callable[[Ctx], None]]:
        """Registers a check function under its own name.

        Args:
            points: what the check is worth.
            hidden: False for checks also shown to students (public checks).
            timeout_scale: multiplies the per-call timeout for heavy probes.
            needs: ``"cuda"``/``"accelerator"`` when it can only run on one.
        """

        def deco(fn: Callable[[Ctx], None]) -> Callable[[Ctx], None]:
            if any(c.name == fn.__name__ for c in self.checks):
                raise ValueError(f"duplicate check name {fn.__name__}")
            self.checks.append(Check(fn.__name__, float(points), fn, hidden, timeout_scale, needs,
                                     (fn.__doc__ or "").strip()))
            return fn

        return deco

    @property
    def max_score(self) -> float:
        """Sum of the checks' points."""
        return float(sum(c.points for c in self.checks))


def stricter(worker: int, grader: int | None) -> tuple[int, int]:
    """The smaller and the larger of a count the student's process kept and the grader's own count of the same
    events, the one way checks combine them (a raw memory write can rewind the first, not the second).

    Args:
        worker: the count the probe kept in the worker (its answer).
        grader: the grader's count of the worker's tallies (:meth:`Ctx.counted`, or a sum of several), or None
            where nothing is counted outside the student's process (the notebook's self-check; the reference
            standing in for the student): then the worker's count is both.

    Returns:
        ``(smaller, larger)``: a check that needs the events judges the first, one that forbids them the second.
    """
    worker = int(worker)
    return (worker, worker) if grader is None else (min(worker, int(grader)), max(worker, int(grader)))


class Ctx:
    """What a check sees: seeded randomness, the two sides, and the verdict helpers."""

    def __init__(self, *, rng: np.random.Generator, seed: int, device: dict[str, str],
                 student: Callable[..., Any], reference: Callable[..., Any],
                 observed: Callable[[], dict[str, int] | None] | None = None,
                 counted: Callable[[str], int | None] | None = None) -> None:
        self.rng = rng
        self.seed = seed
        self.device = device
        self._student = student
        self._reference = reference
        self._observed = observed
        self._counted = counted

    def student(self, probe: str, call: str | dict[str, Any] | None = None, timeout_scale: float = 1.0,
                **kwargs: Any) -> Any:
        """Runs a probe on the student's code; raises StudentProblem when it cannot.

        ``call`` names the call in messages: code (a ``str``) or, where it takes words, a catalogued label
        (:func:`autograder.core.i18n.label`) whose text marks its own code.
        """
        return self._student(probe, call or probe, timeout_scale, kwargs)

    def observed(self) -> dict[str, int] | None:
        """What the grader itself saw of the student's last probe call, outside the student's process:
        ``{"programs": n, "distinct": k}``, the JAX programs the worker compiled (asked the grader for,
        ``autograder.workers.compile_cache``) during that call. None where nothing is seen: the notebook's
        self-check (the probes run in the student's own process) or a worker that compiles no JAX."""
        return self._observed() if self._observed is not None else None

    @property
    def watched(self) -> bool:
        """Whether the grader watches the student's worker from outside: it counts the worker's tallies
        (:meth:`counted`) and its reference runs in a worker of its own on the same devices. False in the
        notebook's self-check (probes in the student's own process, the reference a snapshot made elsewhere)
        and where the reference stands in for the student."""
        return self._counted is not None

    def counted(self, name: str) -> int | None:
        """How many events ``name`` the student's last probe call tallied, counted by the grader itself as
        the worker wrote them (``autograder.probing.tools.tally``): a count kept in the worker's memory can
        be rewound by a raw memory write, this one cannot. None where nothing is counted outside the
        student's process (the notebook's self-check; the reference standing in for the student)."""
        return self._counted(name) if self._counted is not None else None

    def counts(self, name: str, worker: int) -> tuple[int, int]:
        """The smaller and the larger of a count kept in the student's process (``worker``, the probe's own
        record) and the grader's own count of the tallies ``name`` of the last probe call (:meth:`counted`):
        :func:`stricter` of the two. A check that needs an event judges the smaller, one that forbids it the
        larger; equal where nothing was forged."""
        return stricter(worker, self.counted(name))

    def reference(self, probe: str, **kwargs: Any) -> Any:
        """Runs a probe on the reference solution (cached per grading run)."""
        return self._reference(probe, kwargs)

    def both(self, probe: str, call: str | dict[str, Any] | None = None, timeout_scale: float = 1.0,
             **kwargs: Any) -> tuple[Any, Any]:
        """``(student, reference)`` results of the same probe on the same inputs."""
        # the reference first: a grader bug is reported before the student's code is run. Not both at
        # once: on a 2-core box with --jobs 2, a lone submission took 0.5-1.4 s longer (4 busy processes)
        want = self.reference(probe, **kwargs)
        return self.student(probe, call, timeout_scale, **kwargs), want

    def backend(self, framework: str) -> str:
        """``cpu``/``cuda`` for torch, ``cpu``/``gpu``/``tpu`` for jax."""
        return self.device.get(framework, "cpu")

    def difference(self, got: Any, want: Any, *, kind: str, framework: str = "torch") -> str | None:
        """The first difference (a student-safe sentence) or None, without failing."""
        return first_difference(got, want, tolerance(kind, self.backend(framework)))

    def drift_start(self, got: Any, want: Any, *, kind: str, framework: str = "torch") -> int | None:
        """Where a series of per-step values (losses, then final params) that started like the reference's drifts
        away: :func:`autograder.core.compare.drift_start` (a state not carried from one step to the next)."""
        return drift_start(got, want, tolerance(kind, self.backend(framework)))

    def assert_close(self, got: Any, want: Any, *, kind: str, what: str | dict[str, Any],
                     framework: str = "torch") -> None:
        """Fails with MISMATCH unless the trees match within the tolerance of ``kind``.

        ``what`` names what is compared: code (a ``str``, shown as code) or, where it takes words, a
        catalogued label (:func:`autograder.core.i18n.label`), so the message is in one language.
        """
        detail = self.difference(got, want, kind=kind, framework=framework)
        if detail:
            raise Fail("MISMATCH", what=f"`{what}`" if isinstance(what, str) and what else what, detail=detail)


INTERNAL_ERROR = "INTERNAL_ERROR"


def result_of(check: Check, error: BaseException | None, *, lang: str,
              skip: tuple[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The test result of one check from how it ended.

    Args:
        check: the check.
        error: what ``check.fn(ctx)`` raised, or None when it returned.
        lang: the message language.
        skip: ``(key, fields)`` when the check was not run (a device it needs, a spent budget):
            a failure with that message, never a pass.

    Returns:
        ``{"name", "score", "max_score", "passed", "hidden", "message", "code"}`` (docs/grading-contract.md's
        test row): a :class:`CheckFailure` gives its own key and message, a :class:`GraderBug` or any
        other exception ``INTERNAL_ERROR``.
    """
    code, message = "", ""
    fields: dict[str, Any] = {}
    if skip is not None:
        code, fields = skip
    elif isinstance(error, CheckFailure):
        code, message = error.key, error.message(lang)
    elif isinstance(error, GraderBug):
        code, fields = INTERNAL_ERROR, {"error": clean(str(error))}
    elif error is not None:
        tb = traceback.format_exception_only(type(error), error)[-1].strip()
        code, fields = INTERNAL_ERROR, {"error": clean(f"{check.name}: {tb}")}
    passed = code == ""
    if not passed and not message:
        from autograder.core.i18n import render

        message = render(code, lang, **fields)
    return {"name": check.name, "score": check.points if passed else 0.0, "max_score": check.points,
            "passed": passed, "hidden": check.hidden, "message": message, "code": code}


def run_check(check: Check, ctx: Ctx, *, lang: str, skip: tuple[str, dict[str, Any]] | None = None,
              judge: Callable[[Check, BaseException], BaseException] | None = None) -> dict[str, Any]:
    """Runs one check (unless ``skip``) and turns every outcome into its test result.

    A bug in a check never passes and never escapes: it is ``INTERNAL_ERROR``. Only what is
    no ``Exception`` (Ctrl-C) goes through.

    Args:
        check: the check.
        ctx: its context (:class:`Ctx`).
        lang: the message language.
        skip: see :func:`result_of`.
        judge: decides whose a failure is before it becomes a result (the engine's
            ``ExerciseGrading.judged``: a crash on the student's data is the student's); None: as raised.

    Returns:
        The test result (:func:`result_of`).
    """
    if skip is not None:
        return result_of(check, None, lang=lang, skip=skip)
    try:
        check.fn(ctx)
    except Exception as err:  # noqa: BLE001 - every outcome becomes a result
        return result_of(check, judge(check, err) if judge is not None else err, lang=lang)
    return result_of(check, None, lang=lang)
