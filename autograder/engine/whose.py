"""Whose a check's failure is when it is no verdict: the student's, or the grader's own trouble.

A check judges, in the grader's process, plain data a student's worker sent back; the student's code
runs that worker and can send anything the wire carries (a forged response, a value of a type or shape
no check expects). So a check that crashes (``TypeError``, ``KeyError``...), or a probe whose worker
says it could not answer (:data:`autograder.core.protocol.NO_ANSWER`), proves nothing by itself. The
grader decides from what its own process establishes: it runs the same check again with the reference
standing in for the student: the reference run again, fresh (:class:`StandIn`, a reference worker of its
own that loads the solution anew and answers ``ctx.student``'s calls in the order the check makes them, on
the same seeded inputs; never from the run's cache, which keys an answer by probe and arguments alone and
so would give a stateful probe, ex05's trace counter called twice with one batch, its first answer again),
``ctx.reference`` as for the student (the run's cache), nothing observed. When that passes, the crash came
from the student's answers: the student's, the test scores 0 (:data:`UNREADABLE`, which names no expected
value). When it fails too (or the fresh reference does not load, dies, or cannot answer a probe), the
check or the reference is broken: the grader's (``INTERNAL_ERROR``, then ``grader_error``), with a reason
made of grader-side facts only (:func:`reason`: the check, the exception's type, the grader's frame). It costs
a reference worker's start and the check's probes run once more, only when a check crashed.

What is never judged again: a verdict or a student's failure (:class:`autograder.core.suite.CheckFailure`
other than :data:`NO_ANSWER`), the grader's own trouble (:class:`autograder.core.suite.GraderBug`: the
reference failed, a death judged the grader's) and a cancelled run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Protocol

from autograder.core.paths import ROOT
from autograder.core.protocol import NO_ANSWER
from autograder.core.suite import Check, CheckFailure, Ctx, GraderBug
from autograder.engine.outcomes import GradingCancelled

# the student's test result when a check crashed on the student's answers (and passed on the reference's)
UNREADABLE = "CHECK_UNREADABLE"


def needs_judging(error: BaseException | None) -> bool:
    """Whether ``error`` (what a check raised) may be either side's: a crash, or a probe with no answer."""
    if error is None or isinstance(error, (GraderBug, GradingCancelled)):
        return False
    if isinstance(error, CheckFailure):
        return error.key == NO_ANSWER
    return True


class StandIn(Protocol):
    """The reference run again, fresh, for one check (:class:`autograder.engine.reference.FreshReference`)."""

    def call(self, probe: str, kwargs: dict[str, Any]) -> Any:
        """The fresh reference's answer to ``probe``, the calls before it made in the same worker; raises
        GraderBug."""
        ...

    def close(self) -> None:
        """Closes its worker."""
        ...


def stand_in_ctx(ctx: Ctx, fresh: StandIn, reference: Callable[..., Any]) -> Ctx:
    """A context like ``ctx`` with the reference standing in for the student.

    Args:
        ctx: a fresh context of the check (its rng not drawn from yet): its seed, device and rng are kept.
        fresh: the reference run again, fresh: it answers ``ctx.student``, each call in the order the check makes
            it, nothing cached.
        reference: ``(probe, kwargs, fresh=None) -> value``, the reference's probe call: from the run's cache
            (``ctx.reference``), or ``fresh`` 's answer when given (the grader's trouble noted either way).

    Returns:
        A context whose ``ctx.student`` is answered by ``fresh`` and whose ``ctx.observed()`` is None (nothing
        of the student's is seen).
    """

    def student(probe: str, _call: Any, _scale: float, kwargs: dict[str, Any]) -> Any:
        return reference(probe, kwargs, fresh)

    return Ctx(rng=ctx.rng, seed=ctx.seed, device=ctx.device, student=student, reference=reference)


def stand_in(check: Check, ctx: Ctx, fresh: StandIn, reference: Callable[..., Any]) -> BaseException | None:
    """Runs ``check`` with the reference standing in for the student (:func:`stand_in_ctx`), then closes ``fresh``.

    Args:
        check: the check.
        ctx: a fresh context of the check (its rng not drawn from yet).
        fresh: the reference run again, fresh, that answers its ``ctx.student``.
        reference: see :func:`stand_in_ctx`.

    Returns:
        What it raised, or None when it passed.
    """
    try:
        check.fn(stand_in_ctx(ctx, fresh, reference))
    except Exception as err:  # noqa: BLE001 - whatever it raised is the answer
        return err
    finally:
        fresh.close()
    return None


def grader_frame(error: BaseException) -> str:
    """The innermost frame of ``error`` 's traceback in the grader's own files (``autograder/...:LINE in f``),
    or ``""``: where a crash happened, never what it said."""
    where = ""
    tb = error.__traceback__
    root = str(ROOT) + os.sep
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename.startswith(root):
            where = f"{code.co_filename[len(root):]}:{tb.tb_lineno} in {code.co_name}"
        tb = tb.tb_next
    return where


def reason(check: str, error: BaseException) -> str:
    """The ``grader_reason`` of a check that failed with the reference standing in for the student: the
    check, the exception's type and the grader's frame (grader-side facts; no exception text)."""
    frame = grader_frame(error)
    how = f"{type(error).__name__}" + (f" ({error.key})" if isinstance(error, CheckFailure) else "")
    return (f"{check}: the check fails with the reference standing in for the student: {how}"
            + (f" at {frame}" if frame else "") + " — the check or the reference is broken")


def described(error: BaseException) -> str:
    """``error`` for the instructor's log without its text (it may carry the student's data): its type,
    catalogue key and the grader's frame."""
    frame = grader_frame(error)
    key = f" ({error.key})" if isinstance(error, CheckFailure) else ""
    return f"{type(error).__name__}{key}" + (f" at {frame}" if frame else "")
