"""Verdicts on what the grader itself saw a student's worker do, outside the student's process.

The counters a probe keeps (how often a loss was traced, how often a model ran) live in the
student's process, where the student's code can reach them. What the grader sees is not: every
program a student's JAX worker compiles is asked of the grader first (``autograder.workers.compile_cache``),
and :meth:`autograder.core.suite.Ctx.observed` gives their count for the student's last probe call. A
check that calls a jitted function once per request therefore knows, call by call, what was
compiled: a function jitted as a whole compiles one program per new input shape and none for a
shape it has seen; code run eagerly compiles one per operation; a function re-jitted per call
compiles again on every call. The probes empty JAX's in-memory caches before such a sequence, so
the count does not depend on what earlier checks compiled.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from autograder.core.suite import Ctx, Fail

# One program per new shape; a few more leave room for a small eager operation around the jitted call.
MAX_PROGRAMS_PER_SHAPE = 3


def programs(ctx: Ctx) -> int | None:
    """Programs the grader saw the student's last probe call compile (None: not observed here)."""
    seen = ctx.observed()
    return None if seen is None else int(seen["programs"])


def compiled_once_per_shape(counts: Sequence[int | None], shapes: Sequence[Hashable], *, what: str, where: str,
                            most: int = MAX_PROGRAMS_PER_SHAPE) -> None:
    """Fails unless each call compiled 1..``most`` programs for a new input shape and none for a seen one.

    Args:
        counts: programs observed per call (:func:`programs`); None entries (nothing observed, as in
            the notebook's self-check) skip the verdict.
        shapes: each call's input shape (anything hashable: equal for calls with the same shapes).
        what: the function called, for messages (``"step"``).
        where: where the jitted function should be created, for messages (``"make_train_step"``).
        most: programs a new shape may compile.
    """
    seen: set[Hashable] = set()
    for i, (count, shape) in enumerate(zip(counts, shapes, strict=True)):
        if count is None:
            return
        if shape not in seen and count == 0:
            raise Fail("COMPILED_NOTHING", call=i + 1, what=what, where=where)
        if shape not in seen and count > most:
            raise Fail("COMPILED_MANY", call=i + 1, what=what, where=where, programs=count)
        if shape in seen and count:
            raise Fail("COMPILED_AGAIN", call=i + 1, what=what, where=where, programs=count)
        seen.add(shape)
