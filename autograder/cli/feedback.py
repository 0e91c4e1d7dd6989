"""``tapetrace feedback``: hand results back, one feedback page per student named by roster id, and Moodle's zip.

    tapetrace feedback results.json --roster roster.csv --out handback/ [--overrides OVERRIDES.csv]
        [--moodle-zip feedback.zip] [--format html|md|both] [--lang en|es]

Writes ``OUT/<student_id>/feedback.html`` per roster student with a submission (only that student's rows),
with the instructor's manual overrides applied (the autograder's score kept beside each), and with
``--moodle-zip`` the zip Moodle's "Upload multiple feedback files in a zip" takes (roster column
``participant_id``; autograder/reports/handback.py). Exit status: 0; 2 when it cannot be written (one line: a
roster or overrides file that cannot be used, a submission the roster does not name); 3 when a student was
left out (no ``student_id``, a folder name that would be another's id, no ``participant_id`` or one shared with
another student for the Moodle zip) or an override was not applied (listed).

Authority (docs/security.md#authority-map): ids, names and overrides come only from the instructor's roster
and overrides files; an override's ``student`` is a roster ``student_id``, never a file or folder name; nothing
inside a submission is read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from autograder.core.records import ResultRow


def run(args: argparse.Namespace) -> int:
    """``tapetrace feedback``: writes the pages (and the zip); returns the exit status."""
    from autograder.core import status as _status
    from autograder.core.text import terminal
    from autograder.reports import gradebook as _gradebook
    from autograder.reports import handback as _handback
    from autograder.reports import overrides as _overrides
    from autograder.reports import report as _report

    try:
        skipped: list[str] = []
        results: Sequence[ResultRow] = [r for path in args.results for r in _report.read_json(path, skipped)]
        roster = _gradebook.read_roster(args.roster)
        rows = []
        if args.overrides:
            _overrides.refuse_inside_submissions(args.overrides, results)
            results, rows = _overrides.apply(results, _overrides.read(args.overrides), roster)
        done = _handback.hand_back(results, roster, args.out, args.lang, args.format, args.moodle_zip)
    except (OSError, ValueError, _gradebook.GradebookError, _overrides.OverrideError) as err:
        print(f"tapetrace feedback: {terminal(str(err).splitlines()[0])}", file=sys.stderr)
        return 2
    for n in [*skipped, *done.notes, *_overrides.flagged_lines(rows), *done.left_out]:
        print(f"tapetrace feedback: {terminal(n)}", file=sys.stderr)
    zipped = f" and {args.moodle_zip} ({len(done.zip_entries)} file(s))" if args.moodle_zip else ""
    print(terminal(f"wrote {len(done.pages)} page(s) into {args.out}{zipped}"))
    return _status.EXIT_NOT_ALL_GRADED if done.left_out or _overrides.not_applied(rows) else 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Adds ``feedback`` and its options to the CLI's subparsers."""
    g = sub.add_parser("feedback", help="hand results back: a feedback page per student (roster id), Moodle's zip",
                       description="One folder per roster student holding only their feedback page, with the "
                                   "manual overrides applied; and the zip Moodle takes for bulk feedback upload.")
    g.add_argument("results", nargs="+", metavar="RESULTS.json", help="tapetrace grade's --json file(s)")
    g.add_argument("--roster", required=True, metavar="ROSTER.csv",
                   help="columns file, student_id (optional name, email, section, participant_id: Moodle's "
                        "participant number, for --moodle-zip)")
    g.add_argument("--out", required=True, metavar="DIR", help="the folder to write (DIR/<student_id>/feedback.html)")
    g.add_argument("--overrides", metavar="OVERRIDES.csv", help="manual overrides to apply (as report's, gradebook's)")
    g.add_argument("--moodle-zip", metavar="FILE.zip",
                   help="also write the zip for Moodle's 'Upload multiple feedback files in a zip'")
    g.add_argument("--format", default="html", choices=["html", "md", "both"], help="the pages' format (default html)")
    g.add_argument("--lang", default="en", choices=["en", "es"])
    g.set_defaults(func=run)
    return g
