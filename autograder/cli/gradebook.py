"""``tapetrace gradebook``: results JSON -> a CSV Canvas or Moodle imports (autograder/_gradebook.py).

    tapetrace gradebook results.json --out grades.csv [--format canvas|moodle] [--roster roster.csv]

Exit status: 0; 2 when it cannot be written (one line); 3 when some cell was left blank because the
grader could not grade it (``tapetrace grade --resume`` first).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def run(args: argparse.Namespace) -> int:
    """``tapetrace gradebook``: writes the CSV; returns the exit status."""
    from autograder.core import status as _status
    from autograder.reports import gradebook as _gradebook
    from autograder.reports import report as _report

    try:
        results = [r for path in args.results for r in _report.read_json(path)]
        roster = _gradebook.read_roster(args.roster) if args.roster else None
        text, notes = _gradebook.to_csv(results, args.format, roster, prefix=args.prefix)
        _report._atomic_write(args.out, text)
    except (OSError, ValueError, _gradebook.GradebookError) as err:
        print(f"tapetrace gradebook: {str(err).splitlines()[0]}", file=sys.stderr)
        return 2
    for n in notes:
        print(f"tapetrace gradebook: blank: {_report.terminal_text(n)}", file=sys.stderr)
    print(f"wrote {args.out} ({len(results)} students, {args.format})")
    return _status.EXIT_NOT_ALL_GRADED if notes else 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Adds ``gradebook`` and its options to the CLI's subparsers."""
    g = sub.add_parser("gradebook", help="a CSV for Canvas or Moodle from results JSON")
    g.add_argument("results", nargs="+", metavar="RESULTS.json")
    g.add_argument("--out", required=True, metavar="OUT.csv")
    g.add_argument("--format", default="canvas", choices=["canvas", "moodle"])
    g.add_argument("--roster", metavar="ROSTER.csv", help="columns file, student_id (optional name, email, section)")
    g.add_argument("--prefix", default="tapetrace ", help="prefix of the grade columns' names (default 'tapetrace ')")
    g.set_defaults(func=run)
    return g
