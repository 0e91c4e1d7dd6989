"""What the instructor is told about a ``tapetrace grade`` run's rows once they are written.

Lines for the terminal (each already escaped for it; the CLI prefixes ``tapetrace: `` and prints them):
submissions that could not be read at all (:func:`unreadable`), submissions in which no exercise was
found (:func:`nothing_found`: a hand-in gone wrong looks like a student who did not try), and the
exercises that are the grader's trouble, not the students' (:func:`not_graded`: ``grader_error``,
``ungraded``, with what to do).
"""

from __future__ import annotations

from pathlib import Path

from autograder.core import status as _status
from autograder.core.records import ResultRow
from autograder.reports.report import terminal_text


def unreadable(results: list[ResultRow]) -> list[str]:
    """One warning per submission that could not be read at all (corrupt, not JSON, too big)."""
    lines = []
    for res in results:
        rows = list(res.get("exercises", {}).values())
        if rows and all(e.get("status") == "unreadable" for e in rows):
            lines.append(f"warning: {terminal_text(res['submission'])}: "
                         f"{terminal_text(rows[0].get('message', ''))} (status unreadable)")
    return lines


def _holding(path: str) -> str:
    """What a submission that yielded no exercise holds, in a few words (for the instructor's warning)."""
    p = Path(path)
    if not p.is_dir():
        return "no exercise file or notebook section in it"
    try:
        names = sorted(f.relative_to(p).as_posix() for f in p.rglob("*") if f.is_file())
    except OSError:
        return "a folder that cannot be listed"
    if not names:
        return "an empty folder"
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return f"a folder holding no exercise file ({shown}; expected names like ex01_torch_mlp.py or a notebook)"


def nothing_found(results: list[ResultRow]) -> list[str]:
    """One warning per submission in which no exercise was found at all (an empty folder, files named
    otherwise): its rows are ``missing`` (docs/grading-contract.md, "Statuses": no file), as for a student who did not try, and the
    instructor is told which submissions look like a hand-in gone wrong."""
    lines = []
    for res in results:
        rows = list(res.get("exercises", {}).values())
        if rows and all(e.get("status") == "missing" for e in rows):
            lines.append(f"warning: {terminal_text(res['submission'])}: "
                         f"{terminal_text(_holding(str(res['submission'])))}: every exercise is missing "
                         "(status missing)")
    return lines


def not_graded(results: list[ResultRow], json_path: str | None) -> list[str]:
    """One line per exercise that is the grader's (``grader_error``, ``ungraded``), then what to do; none
    when every exercise was graded.

    Args:
        results: the run's rows.
        json_path: ``--json`` (where ``--resume`` would finish the run), or None.
    """
    counts = _status.count_graders(results)
    if not counts:
        return []
    lines = []
    for res in results:
        for ex in _status.graders_exercises(res):
            e = res["exercises"][ex]
            lines.append(f"{e['status']}: {terminal_text(res['submission'])} {ex}: "
                         f"{terminal_text(e.get('grader_reason', ''))[:300]}")
    what = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    again = (f"tapetrace grade ... --json {json_path} --resume" if json_path
             else "tapetrace grade ... with --json OUT.json, then --resume")
    lines.append(f"{sum(counts.values())} exercise(s) were not graded ({what}): the grader's trouble, not the "
                 f"students'; each row's grader_reason says why. Fix the cause, then grade them again: {again}")
    return lines
