"""``tapetrace regrade``: grade again only the pairs whose fingerprint moved, with the earlier seed.

    tapetrace regrade OLD.json [SUBMISSION...] --json NEW.json [--csv NEW.csv] [--all] [--device ...]

Writes the new results (the earlier rows with the pairs graded again merged in), their receipt, and the
diff beside NEW.json: ``NEW.diff.json`` (for ``tapetrace report --regrade``), ``NEW.diff.csv`` and
``NEW.diff.md``. With ``--overrides FILE`` (the instructor's manual overrides, autograder/reports/overrides.py)
the new results stay the autograder's; the overrides are checked against them and those whose check changed
are flagged (and still applied) in ``NEW.diff.json``'s ``overrides`` and the receipt. Their ``student`` is a
roster ``student_id`` with ``--roster ROSTER.csv``, else the submission's path as OLD.json holds it (never a
file or folder name alone). Exit status as ``grade``'s: 0, 2 (could not run, one line), 3 (some row the
grader's, or an override not applied: a student without a submission, or with two; listed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from autograder.core.records import ResultRow

ROSTER_ALONE = "--roster names the students of --overrides; give --overrides FILE with it, or leave --roster out"


def _exit_error(msg: str) -> int:
    print(f"tapetrace regrade: {msg}", file=sys.stderr)
    return 2


def diff_paths(json_path: str) -> dict[str, str]:
    """Where the diff goes: ``NEW.diff.json``, ``NEW.diff.csv``, ``NEW.diff.md`` beside ``NEW.json``."""
    p = Path(json_path)
    stem = p.with_suffix("") if p.suffix == ".json" else p
    return {k: f"{stem}.diff.{k}" for k in ("json", "csv", "md")}


def run(args: argparse.Namespace) -> int:
    """``tapetrace regrade``: plan, grade the pairs that moved, merge, write results and diff."""
    import json

    from autograder.cli.grade import _check_output
    from autograder.core import device as _device
    from autograder.core import status as _status
    from autograder.engine import GradingRun
    from autograder.engine import regrade as _regrade
    from autograder.engine import resume as _resume
    from autograder.engine import session as _session
    from autograder.reports import receipt as _receipt
    from autograder.reports import regrade_render as _render
    from autograder.reports import report as _report

    try:
        old_rows = _report.read_json(args.old)
    except (OSError, ValueError) as err:
        return _exit_error(f"cannot read {args.old}: {str(err).splitlines()[0]}")
    for path, flag in ((args.json, "--json"), (args.csv, "--csv")):
        reason = _check_output(path, flag)
        if reason:
            return _exit_error(reason)
    ovs, roster = None, None
    if getattr(args, "overrides", None):  # the instructor's files, checked before anything is graded
        from autograder.reports import gradebook as _gradebook
        from autograder.reports import overrides as _overrides

        try:
            roster = _gradebook.read_roster(args.roster) if getattr(args, "roster", None) else None
            _overrides.refuse_inside_submissions(args.overrides, old_rows)
            ovs = _overrides.read(args.overrides)
            _overrides.resolve(ovs, old_rows, roster)
        except (OSError, UnicodeDecodeError, _gradebook.GradebookError, _overrides.OverrideError) as err:
            return _exit_error(str(err).splitlines()[0])
    elif getattr(args, "roster", None):
        return _exit_error(ROSTER_ALONE)
    try:
        device = _device.resolve(args.device)
        the_plan = _regrade.plan(old_rows, args.submissions or None, device, public_only=args.public_only,
                                 everything=args.all)
    except (_device.DeviceError, _regrade.RegradeRefused) as err:
        return _exit_error(str(err))
    for p in the_plan.paths:
        if not Path(p).exists():
            return _exit_error(f"{p}: the submission is no longer there (give its new path, or regrade without it)")
    if not args.quiet:
        print(f"tapetrace regrade: {the_plan.pairs} (submission, exercise) pair(s) of {len(the_plan.paths)} "
              f"submission(s) to grade again, seed {the_plan.seed}", file=sys.stderr)
    new_rows: dict[str, ResultRow] = {}
    if the_plan.paths:
        wanted = sorted({ex for v in the_plan.exercises_for.values() for ex in v})
        # made for the exercises graded again: its zygotes import and warm what those need (as grade --only)
        run_ = GradingRun(device=args.device, timeout=args.timeout, seed=the_plan.seed, lang=args.lang,
                          public_only=args.public_only, exercises=wanted)
        # the class's earlier results (and what this writes at the end) are kept from its students' workers
        _session.keep_outputs(run_, (args.old, args.json, _receipt.sidecar(args.json), args.csv,
                                     *diff_paths(args.json).values()), checkpoint=None)
        try:
            graded = run_.grade(the_plan.paths, only=wanted, jobs=run_.plan.jobs_for(args.jobs),
                                exercises_for=the_plan.exercises_for)
        finally:
            run_.close()
        for p, res in zip(the_plan.paths, graded):
            new_rows[p] = _resume.merge(the_plan.old[p], res, the_plan.exercises)
    by_place = {_resume.same_place(p): row for p, row in new_rows.items()}
    results = [by_place.get(_resume.same_place(str(r["submission"])), r) for r in old_rows]
    d = _regrade.diff(the_plan, new_rows)
    audit = None
    if ovs is not None:  # kept across the regrade: applied to the new rows, flagged where their check changed
        try:
            _adjusted, rows = _overrides.apply(results, ovs, roster, regrade=d)
        except _overrides.OverrideError as err:
            return _exit_error(str(err))
        audit = _overrides.audit(rows, args.overrides)
        d["overrides"] = audit
    out = diff_paths(args.json)
    try:
        _report.write_json(results, args.json)
        if args.csv:
            _report.write_csv(results, args.csv)
        _receipt.write(_receipt.receipt(results, overrides=audit), _receipt.sidecar(args.json))
        _report.atomic_write(out["json"], json.dumps(d, indent=1) + "\n")
        _report.atomic_write(out["csv"], _render.diff_csv(d))
        _report.atomic_write(out["md"], _render.diff_markdown(d))
    except OSError as err:
        return _exit_error(f"cannot write the results: {err}")
    if not args.quiet:
        print(f"tapetrace regrade: {_render.summary_words(d)}; diff in {out['md']}",
              file=sys.stderr)
        for line in _render.changed_words(d):
            print(f"  changed: {line}")
        for line in _overrides.flagged_lines(audit["rows"]) if audit else []:
            print(f"  {line}")
        for m in d["moved"][:50]:
            old_max = m.get("old_max_score", m["max_score"])
            print(f"  {_report.terminal_text(m['submission'])} {m['exercise']}: {m['old_score']:g}/{old_max:g} -> "
                  f"{m['new_score']:g}/{m['max_score']:g} ({'; '.join(m['reasons'])})")
    unapplied = _overrides.not_applied(audit["rows"]) if audit else 0
    return _status.EXIT_NOT_ALL_GRADED if _status.count_graders(results) or unapplied else 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Adds ``regrade`` and its options to the CLI's subparsers."""
    g = sub.add_parser("regrade", help="grade again only what changed since an earlier run, with a diff")
    g.add_argument("old", metavar="OLD.json", help="the earlier run's results (tapetrace grade --json)")
    g.add_argument("submissions", nargs="*", metavar="SUBMISSION",
                   help="regrade only these (default: every submission in OLD.json)")
    g.add_argument("--json", required=True, metavar="NEW.json")
    g.add_argument("--csv", metavar="NEW.csv")
    g.add_argument("--overrides", metavar="OVERRIDES.csv",
                   help="manual overrides kept across the regrade: checked first, then those whose check changed "
                        "are flagged (still applied) in NEW.diff.json and the receipt; student is a roster "
                        "student_id (with --roster), else the submission's path as OLD.json holds it")
    g.add_argument("--roster", metavar="ROSTER.csv",
                   help="as gradebook's: --overrides then names students by their roster student_id")
    g.add_argument("--all", action="store_true", help="grade every pair again, whatever its fingerprint")
    g.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda", "tpu"])
    g.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS")
    g.add_argument("--jobs", type=int, default=None, metavar="N", help="exercises graded at once (default: as grade)")
    g.add_argument("--public-only", action="store_true")
    g.add_argument("--lang", default="en", choices=["en", "es"])
    g.add_argument("--quiet", action="store_true")
    g.set_defaults(func=run)
    return g
