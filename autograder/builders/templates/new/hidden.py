"""Hidden suite of __NAME__: the public checks, then these (10 points in all)."""

from __future__ import annotations

from autograder.core.suite import Ctx, Fail, Suite
from autograder.exercises.__NAME__.public import random_dims, random_input
from autograder.exercises.__NAME__.public import suite as _public

suite = Suite("__NAME__", checks=list(_public.checks))


@suite.check(points=6)
def any_leading_axes(ctx: Ctx) -> None:
    """A `(b, n, d)` input: standardised over the last axis only, as the reference does."""
    got, want = ctx.both("output", call="__FUNC__(x)", x=random_input(ctx, random_dims(ctx, 3)))
    detail = ctx.difference(got, want, kind="forward", framework="__FRAMEWORK__")
    if detail:
        raise Fail("__KEY___LEADING_AXES", call="__FUNC__(x)", ndim=3, detail=detail)
