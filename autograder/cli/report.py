"""``tapetrace report``: a summary report with plots from grading results.

    tapetrace report results.json [more.json ...] [otter_out/*/results.json] --out report/

Inputs are read by content: tapetrace JSON (one object or a list, as
``tapetrace grade --json`` writes) or otter's ``results.json`` (Gradescope
format, as ``otter run -o DIR`` writes), so instructors who graded with otter
get the same plots. A directory is searched for ``results.json`` files
(otter output folders) and tapetrace ``*.json`` files. The output folder gets
one PNG per plot, ``index.html`` that embeds them, ``summary.csv`` and one feedback page per tapetrace
submission, linked from the grid (in ``OUT/feedback/``, or ``--feedback DIR``; none with ``--no-feedback``).
With ``--overrides`` the instructor's manual overrides are applied, the students named by roster ``student_id``
(``--roster``) or else by the submission's path as the results hold it, never by a file or folder name alone. Exit status: 0; 2 when it cannot be written (one line);
3 when an override was not applied (a student without a submission, or with two; listed), the report written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from autograder.core.records import ReportRow
from autograder.core.status import EXIT_NOT_ALL_GRADED
from autograder.reports.summary import ReportError, build_report, read_inputs

DESCRIPTION = "Summary report with plots from results JSON (tapetrace grade --json, or otter run's results.json)."
FEEDBACK_FOLDER = "feedback"  # the feedback pages' folder inside --out, by default


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Adds ``report`` and its options to the CLI's subparsers."""
    p = sub.add_parser("report", help="summary report with plots from results JSON", description=DESCRIPTION)
    _add_arguments(p)
    p.set_defaults(func=run)
    return p


def build_parser() -> argparse.ArgumentParser:
    from autograder.cli.app import _Parser

    return _add_arguments(_Parser(prog="tapetrace report", description=DESCRIPTION))


def _add_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("inputs", nargs="+", metavar="RESULTS",
                   help="tapetrace JSON, otter results.json, or folders holding them")
    p.add_argument("--out", default="report", metavar="DIR", help="output folder (default: report/)")
    p.add_argument("--title", default="tapetrace grading report")
    p.add_argument("--feedback", metavar="DIR", help="where the per-student feedback pages go, each linked from the "
                   "report's grid (default: OUT/feedback/)")
    p.add_argument("--no-feedback", action="store_true", help="write no feedback pages (the grid links to none)")
    p.add_argument("--feedback-format", default="html", choices=["md", "html", "both"])
    p.add_argument("--lang", default="en", choices=["en", "es"])
    p.add_argument("--regrade", metavar="DIFF.json", help="show a regrade's diff (tapetrace regrade's NEW.diff.json)")
    p.add_argument("--overrides", metavar="OVERRIDES.csv",
                   help="manual overrides (student,exercise,test,action,points,comment,by,at): applied to the scores "
                        "shown and the feedback, the autograder's kept beside them, listed in the receipt's audit")
    p.add_argument("--roster", metavar="ROSTER.csv",
                   help="as gradebook's: --overrides then names students by their roster student_id (without it, "
                        "by the submission's path as the results hold it)")
    return p


def main(argv: list[str]) -> int:
    """``tapetrace report`` from its own arguments (tests, scripts)."""
    return run(build_parser().parse_args(argv))


def _overrides_and_roster(args: argparse.Namespace, results: list[ReportRow]) -> tuple[Any, Any, list[str]]:
    """The instructor's overrides file (checked against the results), roster, and the overrides not applied
    (one terminal line each: a student's problem, listed; exit 3), as the options name them.

    Raises:
        ReportError: either cannot be used (one line naming the file and the row).
    """
    from autograder.reports import gradebook as _gradebook
    from autograder.reports import overrides as _overrides

    try:
        roster = _gradebook.read_roster(args.roster) if getattr(args, "roster", None) else None
        if not getattr(args, "overrides", None):
            return None, roster, []
        _overrides.refuse_inside_submissions(args.overrides, results)
        ovs = _overrides.read(args.overrides)
        _adjusted, rows = _overrides.apply(results, ovs, roster)
    except (OSError, UnicodeDecodeError, _gradebook.GradebookError, _overrides.OverrideError) as err:
        raise ReportError(str(err).splitlines()[0]) from None
    return ovs, roster, _overrides.flagged_lines([r for r in rows if not r["applied"]])


def feedback_folder(args: argparse.Namespace) -> str | None:
    """Where the report writes the feedback pages its grid links to: ``--feedback DIR``, else ``OUT/feedback/``;
    None with ``--no-feedback``."""
    if getattr(args, "no_feedback", False):
        return None
    return args.feedback or str(Path(args.out) / FEEDBACK_FOLDER)


def run(args: argparse.Namespace) -> int:
    """``tapetrace report``: writes the report; returns the exit status."""
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        print(f"tapetrace report: --out {out}: exists and is not a directory", file=sys.stderr)
        return 2
    try:
        results, notes = read_inputs(args.inputs)
        regrade = None
        if getattr(args, "regrade", None):
            from autograder.reports.after import read_regrade

            try:
                regrade = read_regrade(args.regrade)
            except (OSError, ValueError) as err:
                raise ReportError(f"--regrade: {str(err).splitlines()[0]}") from None
        overrides, roster, listed = _overrides_and_roster(args, results)
        page = build_report(results, out, args.title, notes, feedback_folder(args), args.feedback_format, args.lang,
                            regrade=regrade, overrides=overrides, roster=roster)
    except ReportError as err:
        print(f"tapetrace report: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"tapetrace report: cannot write the report: {err}", file=sys.stderr)
        return 2
    for line in listed:
        print(f"tapetrace report: {line}", file=sys.stderr)
    print(f"wrote {page} ({len(results)} submissions)")
    return EXIT_NOT_ALL_GRADED if listed else 0
