"""``tapetrace grade --resume``: what an earlier JSON keeps, what is graded (again), and the merge.

A submission is the same one when its path resolves to the same file (``sub/`` and ``./sub`` and
an absolute path are one submission). Rows the student's code earned are kept; exercises whose status
is the grader's (``grader_error``, ``ungraded``: ``_status``) are graded again, alone, and merged
into their row. A resume never mixes runs: another seed, or another set of exercises, is refused.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from autograder.core import status as _status
from autograder.core.records import ResultRow


class ResumeRefused(Exception):
    """The earlier results and this run cannot share one file (another seed or exercise set)."""


@dataclass
class Plan:
    """What a resumed run does.

    Attributes:
        before: earlier rows kept as they are (in their order).
        paths: the submissions to grade now, in the order given.
        exercises_for: for a submission graded again in part, the exercises to grade.
        partial: for those, the earlier row the new exercises are merged into.
        seed: the seed to grade with (the earlier run's when none was given).
        kept: how many submissions of this run the earlier results already hold in full.
    """

    before: list[ResultRow]
    paths: list[str]
    exercises_for: dict[str, list[str]] = field(default_factory=dict)
    partial: dict[str, ResultRow] = field(default_factory=dict)
    seed: int | None = None
    kept: int = 0


def same_place(path: str) -> str:
    """The key two spellings of one submission share: its resolved absolute path."""
    return os.path.realpath(os.path.abspath(path))


def plan(previous: list[ResultRow], paths: list[str], only: list[str], seed: int | None) -> Plan:
    """Decides what a ``--resume`` run grades.

    Args:
        previous: the rows the ``--json`` file holds.
        paths: the submissions of this run (after ``--shard``), in order.
        only: the exercises this run grades.
        seed: ``--seed`` (None: the earlier run's).

    Returns:
        The :class:`Plan`.

    Raises:
        ResumeRefused: the file holds another seed (or several), or rows of another exercise set.
    """
    seeds = sorted({int(r["seed"]) for r in previous if r.get("seed") is not None})
    if len(seeds) > 1:
        raise ResumeRefused(f"the file mixes seeds ({', '.join(map(str, seeds))}); grade into a new --json")
    if seed is not None and seeds and seeds[0] != seed:
        raise ResumeRefused(f"the file was graded with seed {seeds[0]}; --seed {seed} would mix two runs' "
                            f"inputs in one file (drop --seed, or grade into a new --json)")
    wanted = sorted(only)
    for r in previous:
        have = sorted(r.get("exercises", {}))
        if have != wanted:
            raise ResumeRefused(f"the file holds results of other exercises ({', '.join(have) or 'none'}) than "
                                f"this run asks for ({', '.join(wanted) or 'none'}); use the same --only, or "
                                f"grade into a new --json")
    by_place = {same_place(r["submission"]): r for r in previous}
    out = Plan(before=[], paths=[], seed=seed if seed is not None else (seeds[0] if seeds else None))
    redo: set[str] = set()
    for p in dict.fromkeys(paths):
        old = by_place.get(same_place(p))
        if old is None:
            out.paths.append(p)
            continue
        again = _status.graders_exercises(old)
        if again:
            out.paths.append(p)
            out.exercises_for[p] = again
            out.partial[p] = old
            redo.add(same_place(old["submission"]))
        else:
            out.kept += 1
    out.before = [r for r in previous if same_place(r["submission"]) not in redo]
    return out


def merge(old: ResultRow, new: ResultRow, only: list[str]) -> ResultRow:
    """The earlier row with the exercises graded again replaced by the new results.

    Args:
        old: the earlier row (its ``submission`` spelling is kept).
        new: this run's row for the same submission (only the exercises graded again).
        only: the exercises of the run, in the order rows list them.

    Returns:
        One row: totals recomputed, the new run's device/isolation/launcher facts.
    """
    row = cast(ResultRow, {**old, **{k: v for k, v in new.items() if k not in ("submission", "exercises")}})
    if isinstance(old.get("isolation"), dict) and isinstance(new.get("isolation"), dict):
        from autograder.sandbox.isolate import level_at_least

        # the row's isolation is the weakest its exercises were graded under
        weaker = old if not level_at_least(old["isolation"], str(new["isolation"].get("level", "minimal"))) else new
        row["isolation"] = weaker["isolation"].copy()
    exercises = {**old.get("exercises", {}), **new.get("exercises", {})}
    row["exercises"] = {ex: exercises[ex] for ex in only if ex in exercises}
    row["total"] = round(sum(e["score"] for e in row["exercises"].values()), 6)
    row["max_total"] = round(sum(e["max_score"] for e in row["exercises"].values()), 6)
    return row


def merging(add: Callable[[ResultRow], None], partial: dict[str, ResultRow],
            only: list[str]) -> Callable[[ResultRow], None]:
    """``add`` for a resumed run: a submission graded again in part is merged into its earlier row first.

    Args:
        add: what takes each row (the run's checkpoint).
        partial: :attr:`Plan.partial`.
        only: the exercises of the run.
    """

    def call(res: ResultRow) -> None:
        old = partial.get(res["submission"])
        add(merge(old, res, only) if old is not None else res)

    return call
