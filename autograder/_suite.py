"""Hidden-suite building blocks: a registry of checks and the context they get.

A hidden suite (``autograder/hidden/<exercise>.py``) is a :class:`Suite` with
checks. A check draws inputs from ``ctx.rng`` (seeded per grading run),
asks the student's worker and the reference worker to run the same probe,
and judges the plain data that comes back with :meth:`Ctx.assert_close` or
by raising :class:`Fail`. Checks never import student code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autograder._compare import first_difference
from autograder._tolerances import tolerance


class Fail(Exception):
    """A check failed; ``key`` names a message template in the catalogues."""

    def __init__(self, key: str, **fields: Any) -> None:
        super().__init__(key)
        self.key = key
        self.fields = fields


class StudentProblem(Exception):
    """The student's code could not produce an answer (exception, timeout, crash...)."""

    def __init__(self, key: str, **fields: Any) -> None:
        super().__init__(key)
        self.key = key
        self.fields = fields


class GraderBug(Exception):
    """The reference or a probe misbehaved: never the student's fault."""


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


class Ctx:
    """What a check sees: seeded randomness, the two sides, and the verdict helpers."""

    def __init__(self, *, rng: np.random.Generator, seed: int, device: dict[str, str],
                 student: Callable[..., Any], reference: Callable[..., Any]) -> None:
        self.rng = rng
        self.seed = seed
        self.device = device
        self._student = student
        self._reference = reference

    def student(self, probe: str, call: str | None = None, timeout_scale: float = 1.0,
                **kwargs: Any) -> Any:
        """Runs a probe on the student's code; raises StudentProblem when it cannot."""
        return self._student(probe, call or probe, timeout_scale, kwargs)

    def reference(self, probe: str, **kwargs: Any) -> Any:
        """Runs a probe on the reference solution (cached per grading run)."""
        return self._reference(probe, kwargs)

    def both(self, probe: str, call: str | None = None, timeout_scale: float = 1.0,
             **kwargs: Any) -> tuple[Any, Any]:
        """``(student, reference)`` results of the same probe on the same inputs."""
        want = self.reference(probe, **kwargs)  # first: its compiled code lands in the run's cache
        return self.student(probe, call, timeout_scale, **kwargs), want

    def backend(self, framework: str) -> str:
        """``cpu``/``cuda`` for torch, ``cpu``/``gpu``/``tpu`` for jax."""
        return self.device.get(framework, "cpu")

    def difference(self, got: Any, want: Any, *, kind: str, framework: str = "torch") -> str | None:
        """The first difference (a student-safe sentence) or None, without failing."""
        return first_difference(got, want, tolerance(kind, self.backend(framework)))

    def assert_close(self, got: Any, want: Any, *, kind: str, what: str,
                     framework: str = "torch") -> None:
        """Fails with MISMATCH unless the trees match within the tolerance of ``kind``."""
        detail = self.difference(got, want, kind=kind, framework=framework)
        if detail:
            raise Fail("MISMATCH", what=what, detail=detail)
