"""A benchmark that breaks says so: a zero score or an empty table exits non-zero (issue 38).

A benchmark whose instrumentation no longer reaches the engine (a name moved, a signature changed) still
runs to its end; without these checks it prints a table of zeros and exits 0. Each benchmark calls
:func:`require_score` on what it graded and :func:`require_rows` on what it measured before printing its
last line; ``tests/test_benchmarks_smoke.py`` runs each one at its smallest.
"""

from __future__ import annotations

import sys
from collections.abc import Sized
from typing import NoReturn


def broken(what: str) -> NoReturn:
    """Says on stderr that the benchmark is broken and exits 1.

    Args:
        what: what was wrong, for the person reading the output.
    """
    print(f"BENCHMARK BROKEN: {what}", file=sys.stderr, flush=True)
    sys.exit(1)


def require_score(what: str, score: float, max_score: float | None = None) -> None:
    """Exits 1 when ``score`` is zero (or ``max_score`` is): what the grader scored was not graded.

    Args:
        what: the graded thing (a submission, a section).
        score: the points it got.
        max_score: the points it could get, when known.
    """
    if max_score is not None and not max_score > 0:
        broken(f"{what}: nothing to grade (max score {max_score!r})")
    if not score > 0:
        broken(f"{what}: score {score!r}" + (f"/{max_score:g}" if max_score else "")
               + " (the benchmark no longer reaches the grader, or the grader fails)")


def require_rows(what: str, rows: Sized) -> None:
    """Exits 1 when the table ``rows`` is empty.

    Args:
        what: the table's name.
        rows: its rows (or any sized collection of measurements).
    """
    if not len(rows):
        broken(f"{what}: an empty table (nothing was measured)")
