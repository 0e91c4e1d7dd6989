"""``tapetrace new``: the exercise package's ``__init__.py`` (its metadata, declared once).

Slots: ``__NAME__``, ``__TITLE__`` (string contents), ``__FRAMEWORKS__`` (code: a tuple), ``__FUNC__``.
"""

__FRAMEWORKS__ = ("torch",)

# ---- template ----
"""__NAME__: __TITLE__."""

from autograder.exercises import Exercise

META = Exercise(
    title="Exercise __NN__ — __TITLE__.",
    frameworks=__FRAMEWORKS__,
    cost=0.5,
    names=("__FUNC__",),
)
