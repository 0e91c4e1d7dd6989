"""``tapetrace gradebook``: results JSON -> a CSV Canvas or Moodle imports (autograder/reports/gradebook.py).

    tapetrace gradebook results.json --out grades.csv [--format canvas|moodle] [--roster roster.csv]
        [--deadline 2026-12-01T23:59:00+01:00 [--penalty 10%/day] [--grace 15m] [--late-days N]
         [--extensions ext.csv] [--times times.csv [--time-format FORMAT] | --gradescope-metadata DIR |
          --times-from-mtime] [--timezone Europe/Madrid]]

Writes the CSV and, beside it, its receipt (``OUT.receipt.json``: the results' receipt with the late policy
applied and its counts). Exit status: 0; 2 when it cannot be written (one line: the instructor's own input
is refused as a whole, a roster, times or extensions CSV that cannot be read, a path that is not there); 3
when some cell was left blank for the instructor to resolve (the grader could not grade it: ``tapetrace
grade --resume`` first; or the submission's time is unknown under a late policy, a malformed Gradescope
``submission_metadata.yml`` included: its notes say which part), or an override was not applied (a roster
student without a submission, or with two: listed). ``--overrides`` names students by roster ``student_id``
(with ``--roster``) or else by the submission's path as the results hold it, never by a file or folder name.

Authority (docs/security.md#authority-map): times, extensions and ids come only from the command line, the
instructor's CSVs and the Gradescope export's top-level yml; nothing inside a submission folder is read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from autograder.core.records import ResultRow


def _late_rules(args: argparse.Namespace, results: list[ResultRow]) -> Any:
    """The late policy the options ask for (None without ``--deadline``)."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from autograder.reports import gradebook as _gradebook
    from autograder.reports import late as _late

    try:
        tz = ZoneInfo(args.timezone) if args.timezone else None
    except (ZoneInfoNotFoundError, ValueError) as err:
        raise _late.LateError(f"--timezone {args.timezone}: no such time zone") from err
    late_opts = (args.penalty, args.grace, args.late_days, args.extensions, args.times, args.gradescope_metadata,
                 args.times_from_mtime, args.time_format)
    if args.deadline is None:
        if any(o not in (None, False) for o in late_opts):
            raise _late.LateError("a late policy needs --deadline")
        return None
    rate, unit = _late.parse_penalty(args.penalty) if args.penalty else (0.0, "day")
    policy = _late.Policy(_late.parse_time(args.deadline, tz, "--deadline "), rate, unit,
                          _late.parse_duration(args.grace) if args.grace else _late.parse_duration("0s"),
                          args.late_days)
    fmt = _late.time_format(args.time_format)
    if args.time_format is not None and not args.times:
        raise _late.LateError("--time-format reads the times CSV: give it with --times")
    if args.times:
        times = _late.read_times_csv(args.times, tz, fmt)
    elif args.gradescope_metadata:
        times = _late.read_gradescope(args.gradescope_metadata, tz)
    elif args.times_from_mtime:
        times = _late.mtimes([str(r["submission"]) for r in results])
    else:
        times = None
    ext = _late.read_extensions(args.extensions, policy, tz) if args.extensions else {}
    return _gradebook.LateRules(policy, times, ext)


def _overridden(args: argparse.Namespace, results: list[ResultRow], roster: Any) -> tuple[Sequence[ResultRow], Any]:
    """The rows with the instructor's ``--overrides`` applied and the overrides' audit (None without the option).

    Raises:
        OverrideError: the file cannot be used (naming the file and the row).
    """
    from autograder.reports import overrides as _overrides

    if not getattr(args, "overrides", None):
        return results, None
    _overrides.refuse_inside_submissions(args.overrides, results)
    ovs = _overrides.read(args.overrides)
    adjusted, rows = _overrides.apply(results, ovs, roster)
    for line in _overrides.flagged_lines(rows):
        print(f"tapetrace gradebook: {line}", file=sys.stderr)
    return adjusted, _overrides.audit(rows, args.overrides)


def run(args: argparse.Namespace) -> int:
    """``tapetrace gradebook``: writes the CSV and its receipt; returns the exit status."""
    from autograder.core import status as _status
    from autograder.core.text import terminal
    from autograder.reports import gradebook as _gradebook
    from autograder.reports import overrides as _overrides
    from autograder.reports import receipt as _receipt
    from autograder.reports import report as _report

    try:
        skipped: list[str] = []  # a result object that is not well formed: left out, said why (the rest finish)
        results = [r for path in args.results for r in _report.read_json(path, skipped)]
        roster = _gradebook.read_roster(args.roster) if args.roster else None
        adjusted, audit = _overridden(args, results, roster)
        book = _gradebook.build(adjusted, roster, _late_rules(args, results))
        text = _gradebook.to_csv(book, args.format, prefix=args.prefix)
        _report.atomic_write(args.out, text)
        rec = _receipt.receipt(results, late=book.late, overrides=audit)
        _receipt.write(rec, _receipt.sidecar(args.out))
    except (OSError, ValueError, _gradebook.GradebookError, _overrides.OverrideError) as err:
        print(f"tapetrace gradebook: {terminal(str(err).splitlines()[0])}", file=sys.stderr)
        return 2
    if roster is None:
        print(f"tapetrace gradebook: {_gradebook.FORMATS[args.format].no_roster}", file=sys.stderr)
    for n in [*skipped, *book.notes]:
        print(f"tapetrace gradebook: {terminal(n)}", file=sys.stderr)
    for n in book.blanks:
        print(f"tapetrace gradebook: blank: {terminal(n)}", file=sys.stderr)
    if book.late is not None:
        counts = ", ".join(f"{k} {v}" for k, v in book.late["counts"].items() if v)
        print(terminal(f"late policy: {book.late['policy']}; times: {book.late['times']}; {counts}"))
    print(f"wrote {args.out} ({len(book.students)} students, {args.format}) and {_receipt.sidecar(args.out)}")
    unapplied = _overrides.not_applied(audit["rows"]) if audit is not None else 0
    return _status.EXIT_NOT_ALL_GRADED if book.blanks or unapplied else 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Adds ``gradebook`` and its options to the CLI's subparsers."""
    from autograder.reports.gradebook import FORMATS

    g = sub.add_parser("gradebook", help="a CSV for Canvas or Moodle from results JSON, with a late policy",
                       description="One column per exercise and a total, for an LMS to import; a late policy "
                                   "(--deadline) from submission times you can trust.")
    g.add_argument("results", nargs="+", metavar="RESULTS.json", help="tapetrace grade's --json file(s)")
    g.add_argument("--out", required=True, metavar="OUT.csv",
                   help="the gradebook CSV to write (its receipt goes beside it: OUT.csv.receipt.json)")
    default = next(iter(FORMATS))
    g.add_argument("--format", default=default, choices=list(FORMATS),  # an unknown format: refused here
                   help=f"the LMS whose import columns to write: {', '.join(FORMATS)} (default {default})")
    g.add_argument("--roster", metavar="ROSTER.csv",
                   help="columns file, student_id (optional name, email, section); a file may be a path's tail "
                        "(alice/work.ipynb); roster students without a submission get a blank row")
    g.add_argument("--overrides", metavar="OVERRIDES.csv",
                   help="manual overrides (student,exercise,test,action,points,comment,by,at): applied to the "
                        "grades; the autograder's score is kept in the notes column and the receipt's audit; "
                        "student is a roster student_id (with --roster), else the submission's path")
    g.add_argument("--prefix", default="tapetrace ", help="prefix of the grade columns' names (default 'tapetrace ')")
    late = g.add_argument_group("late policy (all but --deadline optional)")
    late.add_argument("--deadline", metavar="TIME", help="the deadline, ISO 8601 with a UTC offset "
                                                         "(2026-12-01T23:59:00+01:00) or with --timezone")
    late.add_argument("--penalty", metavar="RATE", help="percent of the score taken per started day or hour late: "
                                                        "10%%/day, 2%%/hour (never below 0; default none: flagged)")
    late.add_argument("--grace", metavar="DURATION", help="lateness up to this counts as on time: 15m, 1h")
    late.add_argument("--late-days", type=float, metavar="N",
                      help="late work is accepted up to N days after the deadline; later it scores 0")
    late.add_argument("--extensions", metavar="EXT.csv", help="per-student deadlines: columns file or student_id, "
                                                              "and deadline (a time) or days/hours (added)")
    src = late.add_mutually_exclusive_group()
    src.add_argument("--times", metavar="TIMES.csv", help="submission times (an LMS export's or yours): columns "
                                                          "file or student_id, and submitted_at")
    src.add_argument("--gradescope-metadata", metavar="PATH",
                     help="Gradescope's times: the export's folder (its top-level submission_metadata.yml) "
                          "or that yml; nothing inside a submission_N/ folder is read (the student's)")
    src.add_argument("--times-from-mtime", action="store_true",
                     help="use the submission files' modification times (not trustworthy: recorded as such)")
    late.add_argument("--time-format", metavar="FORMAT",
                      help="the times CSV's timestamp format when not ISO 8601: a strptime format "
                           "('%%m/%%d/%%Y %%H:%%M', '%%b %%d, %%Y %%I:%%M%%p') or an LMS with a documented export "
                           "format (gradescope); the day/month order is never guessed")
    late.add_argument("--timezone", metavar="ZONE",
                      help="the zone of times written without an offset (Europe/Madrid); without it they are refused")
    g.set_defaults(func=run)
    return g
